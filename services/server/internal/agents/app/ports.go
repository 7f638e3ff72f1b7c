// Package app holds the agents module's use cases: creating an agent (its identity principal,
// its profile and agent.created in one transaction) and listing the agents an actor may read.
// Service implements agents.Agents; the ports it needs are declared here, from its point of
// view, and the PostgreSQL adapter implements Store.
package app

import (
	"context"

	"bothy.example.com/server/internal/agents/domain"
)

// Transactor runs fn in one transaction carried by the context fn receives, joining the
// caller's transaction when ctx already carries one. *tx.Runner implements it.
type Transactor interface {
	// RunInTx runs fn and its commit-phase hooks and commits; any error rolls everything back.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Store keeps agent profiles. Every method runs on the transaction of ctx when there is one.
type Store interface {
	// InsertProfile stores the profile of a new agent.
	InsertProfile(ctx context.Context, p domain.Profile) error
	// ActiveProfiles returns the profiles of every agent that is not archived, in no
	// particular order.
	ActiveProfiles(ctx context.Context) ([]domain.Profile, error)
}
