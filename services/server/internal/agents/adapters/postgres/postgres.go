// Package postgres stores agent profiles in the schema agents. Every statement runs on
// tx.Runner.DB(ctx), so it joins the caller's transaction when there is one: createAgent
// inserts the profile in the transaction that creates the agent's principal.
package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the agents module owns.
const Schema = "agents"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the agents module's migration set, which creates the schema and the
// profile table.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("agents: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/agent_insert.sql
	agentInsert string
	//go:embed queries/agent_list_active.sql
	agentListActive string
)

// Store implements app.Store.
type Store struct {
	runner *tx.Runner
}

var _ app.Store = (*Store)(nil)

// New returns a Store whose statements run on runner's transaction of the context, or on its
// pool outside one.
func New(runner *tx.Runner) *Store {
	return &Store{runner: runner}
}

// InsertProfile implements app.Store.
func (s *Store) InsertProfile(ctx context.Context, p domain.Profile) error {
	if _, err := s.runner.DB(ctx).Exec(ctx, agentInsert, p.PrincipalID, p.Description, p.CreatedBy, p.CreatedAt); err != nil {
		return fmt.Errorf("agents: insert profile: %w", err)
	}
	return nil
}

// ActiveProfiles implements app.Store.
func (s *Store) ActiveProfiles(ctx context.Context) ([]domain.Profile, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, agentListActive)
	if err != nil {
		return nil, fmt.Errorf("agents: list profiles: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Profile, error) {
		var (
			p         domain.Profile
			createdAt time.Time
		)
		err := row.Scan(&p.PrincipalID, &p.Description, &p.CreatedBy, &createdAt)
		p.CreatedAt = createdAt.UTC()
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("agents: list profiles: %w", err)
	}
	return out, nil
}
