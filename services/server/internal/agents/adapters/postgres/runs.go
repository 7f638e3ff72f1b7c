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
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

var (
	//go:embed queries/run_insert.sql
	runInsert string
	//go:embed queries/run_get.sql
	runGet string
	//go:embed queries/run_get_for_update.sql
	runGetForUpdate string
	//go:embed queries/run_update.sql
	runUpdate string
	//go:embed queries/run_list_in_progress.sql
	runListInProgress string
	//go:embed queries/run_list_stale.sql
	runListStale string
)

// Runs implements app.RunStore over agents.runs.
type Runs struct {
	runner *tx.Runner
}

var _ app.RunStore = (*Runs)(nil)

// NewRuns returns a Runs whose statements run on runner's transaction of the context, or on
// its pool outside one.
func NewRuns(runner *tx.Runner) *Runs {
	return &Runs{runner: runner}
}

// InsertRun implements app.RunStore.
func (s *Runs) InsertRun(ctx context.Context, r domain.Run) error {
	_, err := s.runner.DB(ctx).Exec(ctx, runInsert, r.ID, r.AgentID, r.ThreadID, r.ChannelID, nullID(r.SpaceID),
		r.RequestedBy, nullID(r.InvocationID), string(r.State), r.Progress, r.Version, r.CreatedAt, r.UpdatedAt,
		nullTime(r.EndedAt), nullID(r.CancelledBy))
	if err != nil {
		return fmt.Errorf("agents: insert run: %w", err)
	}
	return nil
}

// Run implements app.RunStore.
func (s *Runs) Run(ctx context.Context, id uuid.UUID) (domain.Run, error) {
	return s.one(ctx, runGet, id)
}

// RunForUpdate implements app.RunStore.
func (s *Runs) RunForUpdate(ctx context.Context, id uuid.UUID) (domain.Run, error) {
	return s.one(ctx, runGetForUpdate, id)
}

// UpdateRun implements app.RunStore.
func (s *Runs) UpdateRun(ctx context.Context, r domain.Run) error {
	tag, err := s.runner.DB(ctx).Exec(ctx, runUpdate, r.ID, string(r.State), r.Progress, r.Version, r.UpdatedAt,
		nullTime(r.EndedAt), nullID(r.CancelledBy))
	if err != nil {
		return fmt.Errorf("agents: update run: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("agents: update run %s: %w", r.ID, problem.ErrNotFound)
	}
	return nil
}

// RunsInProgress implements app.RunStore.
func (s *Runs) RunsInProgress(ctx context.Context, f app.RunFilter) ([]domain.Run, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, runListInProgress, f.All, nonNilIDs(f.SpaceIDs), nonNilIDs(f.ChannelIDs))
	if err != nil {
		return nil, fmt.Errorf("agents: list runs in progress: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Run, error) { return scanRun(row) })
	if err != nil {
		return nil, fmt.Errorf("agents: list runs in progress: %w", err)
	}
	return out, nil
}

// StaleRuns implements app.RunStore in one query (queries/run_list_stale.sql).
func (s *Runs) StaleRuns(ctx context.Context, updatedBefore time.Time, limit int) ([]domain.Run, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, runListStale, updatedBefore, limit)
	if err != nil {
		return nil, fmt.Errorf("agents: stale runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Run, error) { return scanRun(row) })
	if err != nil {
		return nil, fmt.Errorf("agents: stale runs: %w", err)
	}
	return out, nil
}

// nonNilIDs is ids, or an empty list for none, so the query gets an empty array, not NULL.
func nonNilIDs(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// one reads one run with query; problem.ErrNotFound when there is none.
func (s *Runs) one(ctx context.Context, query string, id uuid.UUID) (domain.Run, error) {
	r, err := scanRun(s.runner.DB(ctx).QueryRow(ctx, query, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Run{}, fmt.Errorf("agents: run %s: %w", id, problem.ErrNotFound)
	}
	if err != nil {
		return domain.Run{}, fmt.Errorf("agents: read run %s: %w", id, err)
	}
	return r, nil
}

// scanRun reads the columns every run query selects, in their order.
func scanRun(row pgx.Row) (domain.Run, error) {
	var (
		r       domain.Run
		state   string
		endedAt *time.Time
	)
	// A NULL id leaves its uuid.Nil in place (kernel/pgxuuid).
	err := row.Scan(&r.ID, &r.AgentID, &r.ThreadID, &r.ChannelID, &r.SpaceID, &r.RequestedBy, &r.InvocationID,
		&state, &r.Progress, &r.Version, &r.CreatedAt, &r.UpdatedAt, &endedAt, &r.CancelledBy)
	if err != nil {
		return domain.Run{}, err
	}
	r.State = domain.RunState(state)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	if endedAt != nil {
		r.EndedAt = endedAt.UTC()
	}
	return r, nil
}

// nullID stores uuid.Nil as NULL.
func nullID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
