package postgres

import (
	"context"
	_ "embed" // the SQL of queries/
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/tx"
)

var (
	//go:embed queries/presence_ensure.sql
	presenceEnsure string
	//go:embed queries/presence_lock.sql
	presenceLock string
	//go:embed queries/presence_update.sql
	presenceUpdate string
	//go:embed queries/presence_due.sql
	presenceDue string
	//go:embed queries/presence_of_agents.sql
	presenceOfAgents string
)

// PresenceStore implements app.PresenceStore on agents.agent_presence. Its statements run in
// the transaction of the context (the use cases open one).
type PresenceStore struct {
	runner *tx.Runner
}

var _ app.PresenceStore = (*PresenceStore)(nil)

// NewPresenceStore returns a PresenceStore on runner.
func NewPresenceStore(runner *tx.Runner) *PresenceStore {
	return &PresenceStore{runner: runner}
}

// Lock implements app.PresenceStore: the row is created first when missing, so two first
// heartbeats of one agent serialise on it.
func (s *PresenceStore) Lock(ctx context.Context, agentID uuid.UUID, now time.Time) (domain.PresenceRow, error) {
	db := s.runner.DB(ctx)
	if _, err := db.Exec(ctx, presenceEnsure, agentID, now); err != nil {
		return domain.PresenceRow{}, fmt.Errorf("agents: presence: %w", err)
	}
	r, err := scanPresence(db.QueryRow(ctx, presenceLock, agentID))
	if err != nil {
		return domain.PresenceRow{}, fmt.Errorf("agents: presence: %w", err)
	}
	return r, nil
}

// Save implements app.PresenceStore.
func (s *PresenceStore) Save(ctx context.Context, r domain.PresenceRow) error {
	var announced *time.Time
	if !r.AnnouncedAt.IsZero() {
		announced = &r.AnnouncedAt
	}
	if _, err := s.runner.DB(ctx).Exec(ctx, presenceUpdate, r.AgentID, r.LastHeartbeatAt, r.ReportedBillingMode,
		string(r.AnnouncedState), r.AnnouncedBillingMode, announced); err != nil {
		return fmt.Errorf("agents: save presence: %w", err)
	}
	return nil
}

// Due implements app.PresenceStore.
func (s *PresenceStore) Due(ctx context.Context, announcedBefore time.Time) ([]domain.PresenceRow, error) {
	return s.query(ctx, presenceDue, announcedBefore)
}

// Of implements app.PresenceStore.
func (s *PresenceStore) Of(ctx context.Context, ids []uuid.UUID) ([]domain.PresenceRow, error) {
	return s.query(ctx, presenceOfAgents, ids)
}

func (s *PresenceStore) query(ctx context.Context, sql string, arg any) ([]domain.PresenceRow, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("agents: presences: %w", err)
	}
	defer rows.Close()
	var out []domain.PresenceRow
	for rows.Next() {
		r, err := scanPresence(rows)
		if err != nil {
			return nil, fmt.Errorf("agents: presences: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("agents: presences: %w", err)
	}
	return out, nil
}

// scanPresence reads one row of the presence queries, in their column order.
func scanPresence(row pgx.Row) (domain.PresenceRow, error) {
	var (
		r         domain.PresenceRow
		state     string
		announced *time.Time
	)
	if err := row.Scan(&r.AgentID, &r.LastHeartbeatAt, &r.ReportedBillingMode, &state, &r.AnnouncedBillingMode, &announced); err != nil {
		return domain.PresenceRow{}, err //nolint:wrapcheck // the callers wrap
	}
	r.AnnouncedState = domain.State(state)
	r.LastHeartbeatAt = r.LastHeartbeatAt.UTC()
	if announced != nil {
		r.AnnouncedAt = announced.UTC()
	}
	return r, nil
}
