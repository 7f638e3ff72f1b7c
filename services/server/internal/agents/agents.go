// Package agents keeps the agents of an instance: an agent is an identity principal of kind
// agent plus a profile (description, creator, archive time) that this module owns.
//
// This root package holds what the module offers to the rest of the server: the Agent value
// and the Agents port (the snapshot lists agents through it). The use cases live in app, the
// table in adapters/postgres and the operations createAgent and listAgents in adapters/httpapi;
// see README.md.
package agents

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Agent is an agent as clients see it: its principal's name and handle with its profile.
type Agent struct {
	// ID is the agent's principal id.
	ID uuid.UUID
	// DisplayName is the name shown for the agent (from its principal).
	DisplayName string
	// Handle is the agent's unique handle, lower case (from its principal).
	Handle string
	// Description says what the agent does; empty when it has none.
	Description string
	// CreatedBy is the principal who created the agent.
	CreatedBy uuid.UUID
	// CreatedAt is when the agent was created, in UTC.
	CreatedAt time.Time
}

// CreateInput is a new agent.
type CreateInput struct {
	// DisplayName is required: 1 to 100 characters without control characters (identity's
	// rule for every principal).
	DisplayName string
	// Handle is required: identity's handle rule; unique among all principals,
	// case-insensitively.
	Handle string
	// Description is optional: at most 500 characters, outer space trimmed, no control
	// characters but line feeds and tabs.
	Description string
}

// Agents lists agents for other modules (the snapshot's agents) and for listAgents.
type Agents interface {
	// List returns every agent that is not archived and that the actor in ctx may read
	// (authorize agent.read on each agent, in filter mode, so hidden agents are dropped
	// without a denial audit), ordered by handle; an empty list when there are none. An agent
	// whose principal no longer exists is not listed. Errors other than a denial (no actor, a
	// pending device, the database) are returned.
	List(ctx context.Context) ([]Agent, error)
}
