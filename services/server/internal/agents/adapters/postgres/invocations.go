package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

var (
	//go:embed queries/invocation_agents_active.sql
	invocationAgentsActive string
	//go:embed queries/invocation_insert.sql
	invocationInsert string
	//go:embed queries/invocation_get.sql
	invocationGet string
	//go:embed queries/invocation_get_for_update.sql
	invocationGetForUpdate string
	//go:embed queries/invocation_update.sql
	invocationUpdate string
	//go:embed queries/invocation_due.sql
	invocationDue string
	//go:embed queries/invocation_key.sql
	invocationKey string
)

// Invocations implements app.InvocationStore over agents.invocations and agents.invocation_key.
type Invocations struct {
	runner *tx.Runner
}

var _ app.InvocationStore = (*Invocations)(nil)

// NewInvocations returns an Invocations whose statements run on runner's transaction of the
// context, or on its pool outside one.
func NewInvocations(runner *tx.Runner) *Invocations {
	return &Invocations{runner: runner}
}

// ActiveAgents implements app.InvocationStore.
func (s *Invocations) ActiveAgents(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, invocationAgentsActive, ids)
	if err != nil {
		return nil, fmt.Errorf("agents: active agents: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("agents: active agents: %w", err)
	}
	return out, nil
}

// InsertInvocation implements app.InvocationStore.
func (s *Invocations) InsertInvocation(ctx context.Context, r app.InvocationRow) error {
	_, err := s.runner.DB(ctx).Exec(ctx, invocationInsert, r.ID, r.AgentID, r.MessageID, r.ThreadID, r.ChannelID,
		nullID(r.SpaceID), r.InvokedBy, r.Reason, r.Attempt, r.State, r.CreatedAt, r.DeliveredAt, r.UpdatedAt,
		nullID(r.ReplyMessageID))
	if err != nil {
		return fmt.Errorf("agents: insert invocation: %w", err)
	}
	return nil
}

// Invocation implements app.InvocationStore.
func (s *Invocations) Invocation(ctx context.Context, id uuid.UUID) (app.InvocationRow, error) {
	return s.one(ctx, invocationGet, id)
}

// InvocationForUpdate implements app.InvocationStore.
func (s *Invocations) InvocationForUpdate(ctx context.Context, id uuid.UUID) (app.InvocationRow, error) {
	return s.one(ctx, invocationGetForUpdate, id)
}

// UpdateInvocation implements app.InvocationStore.
func (s *Invocations) UpdateInvocation(ctx context.Context, r app.InvocationRow) error {
	tag, err := s.runner.DB(ctx).Exec(ctx, invocationUpdate, r.ID, r.Attempt, r.State, r.DeliveredAt, r.UpdatedAt,
		nullID(r.ReplyMessageID))
	if err != nil {
		return fmt.Errorf("agents: update invocation: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("agents: update invocation %s: %w", r.ID, problem.ErrNotFound)
	}
	return nil
}

// DueInvocations implements app.InvocationStore.
func (s *Invocations) DueInvocations(ctx context.Context, deliveredBefore time.Time, limit int) ([]app.InvocationRow, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, invocationDue, deliveredBefore, limit)
	if err != nil {
		return nil, fmt.Errorf("agents: due invocations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.InvocationRow, error) { return scanInvocation(row) })
	if err != nil {
		return nil, fmt.Errorf("agents: due invocations: %w", err)
	}
	return out, nil
}

// InvocationKey implements app.InvocationStore.
func (s *Invocations) InvocationKey(ctx context.Context) ([]byte, error) {
	var key []byte
	if err := s.runner.DB(ctx).QueryRow(ctx, invocationKey).Scan(&key); err != nil {
		return nil, fmt.Errorf("agents: invocation key: %w", err)
	}
	return key, nil
}

// one reads one invocation with query; problem.ErrNotFound when there is none.
func (s *Invocations) one(ctx context.Context, query string, id uuid.UUID) (app.InvocationRow, error) {
	r, err := scanInvocation(s.runner.DB(ctx).QueryRow(ctx, query, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return app.InvocationRow{}, fmt.Errorf("agents: invocation %s: %w", id, problem.ErrNotFound)
	}
	if err != nil {
		return app.InvocationRow{}, fmt.Errorf("agents: read invocation %s: %w", id, err)
	}
	return r, nil
}

// scanInvocation reads the columns every invocation query selects, in their order.
func scanInvocation(row pgx.Row) (app.InvocationRow, error) {
	var r app.InvocationRow
	// A NULL id leaves its uuid.Nil in place (kernel/pgxuuid).
	err := row.Scan(&r.ID, &r.AgentID, &r.MessageID, &r.ThreadID, &r.ChannelID, &r.SpaceID, &r.InvokedBy, &r.Reason,
		&r.Attempt, &r.State, &r.CreatedAt, &r.DeliveredAt, &r.UpdatedAt, &r.ReplyMessageID)
	if err != nil {
		return app.InvocationRow{}, err
	}
	r.CreatedAt, r.DeliveredAt, r.UpdatedAt = r.CreatedAt.UTC(), r.DeliveredAt.UTC(), r.UpdatedAt.UTC()
	return r, nil
}
