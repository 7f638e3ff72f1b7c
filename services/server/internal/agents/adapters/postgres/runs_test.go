package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// TestRuns stores runs, reads them back (NULL ids as uuid.Nil, times in UTC), changes one
// under its row lock and lists the runs in progress oldest first.
func TestRuns(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	store := agentspg.NewRuns(runner)
	ctx := t.Context()
	at := time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC)
	newRun := func(created time.Time, space uuid.UUID) domain.Run {
		return domain.Run{
			ID: ids.New(), AgentID: ids.New(), ThreadID: ids.New(), ChannelID: ids.New(), SpaceID: space,
			RequestedBy: ids.New(), State: domain.RunQueued, Version: 1, CreatedAt: created, UpdatedAt: created,
		}
	}
	inSpace := newRun(at.Add(time.Second), ids.New())
	inDM := newRun(at, uuid.Nil)
	inDM.InvocationID, inDM.State, inDM.Progress = ids.New(), domain.RunRunning, "Reading"
	finished := newRun(at, ids.New())
	for _, r := range []domain.Run{inSpace, inDM, finished} {
		if err := store.InsertRun(ctx, r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
	for _, want := range []domain.Run{inSpace, inDM} {
		got, err := store.Run(ctx, want.ID)
		if err != nil || got != want {
			t.Fatalf("Run = %+v, %v; want %+v", got, err, want)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Fatalf("created_at in %v, want UTC", got.CreatedAt.Location())
		}
	}
	if _, err := store.Run(ctx, ids.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Run of no run = %v, want not found", err)
	}

	// A change under the row lock; one that rolls back leaves the run as it was.
	cancelled, err := finished.Apply(domain.Change{To: domain.RunCancelled, By: finished.RequestedBy, At: at.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	err = runner.RunInTx(ctx, func(ctx context.Context) error {
		locked, err := store.RunForUpdate(ctx, finished.ID)
		if err != nil || locked != finished {
			t.Fatalf("RunForUpdate = %+v, %v; want %+v", locked, err, finished)
		}
		return store.UpdateRun(ctx, cancelled)
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	err = runner.RunInTx(ctx, func(ctx context.Context) error {
		next := cancelled
		next.Progress = "never stored"
		if err := store.UpdateRun(ctx, next); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v", err)
	}
	if got, err := store.Run(ctx, finished.ID); err != nil || got != cancelled {
		t.Fatalf("Run after the change = %+v, %v; want %+v", got, err, cancelled)
	}
	if err := store.UpdateRun(ctx, newRun(at, uuid.Nil)); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("UpdateRun of no run = %v, want not found", err)
	}
	err = runner.RunInTx(ctx, func(ctx context.Context) error {
		_, err := store.RunForUpdate(ctx, ids.New())
		return err
	})
	if !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("RunForUpdate of no run = %v, want not found", err)
	}

	got, err := store.RunsInProgress(ctx, app.RunFilter{All: true})
	if err != nil {
		t.Fatalf("RunsInProgress: %v", err)
	}
	if len(got) != 2 || got[0] != inDM || got[1] != inSpace {
		t.Fatalf("RunsInProgress = %+v, want the run in the direct message, then the one in a space", got)
	}
	// The prefilter: the query states app.RunFilter.Admits.
	for _, f := range []app.RunFilter{
		{},
		{ChannelIDs: []uuid.UUID{inDM.ChannelID}},
		{SpaceIDs: []uuid.UUID{inSpace.SpaceID}},
		{ChannelIDs: []uuid.UUID{inSpace.ChannelID, finished.ChannelID}, SpaceIDs: []uuid.UUID{finished.SpaceID}},
		{SpaceIDs: []uuid.UUID{uuid.Nil}}, // a direct message has no space, whatever the list says
	} {
		got, err := store.RunsInProgress(ctx, f)
		if err != nil {
			t.Fatalf("RunsInProgress(%+v): %v", f, err)
		}
		var want []domain.Run
		for _, r := range []domain.Run{inDM, inSpace} {
			if f.Admits(r) {
				want = append(want, r)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("RunsInProgress(%+v) = %+v, want %+v", f, got, want)
		}
	}
}

// TestStaleRuns: the expiry sweep's query (ADR 0032) returns the queued and running runs last
// updated before the cutoff, oldest first, at most the limit, locked: a second transaction
// skips them, and a run another transaction holds is skipped; a finished run and one updated
// at or after the cutoff are never returned. Its plan reads the partial index
// runs_in_progress.
func TestStaleRuns(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	store := agentspg.NewRuns(runner)
	ctx := t.Context()
	at := time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC)
	cutoff := at.Add(time.Hour)
	newRun := func(created, updated time.Time, state domain.RunState) domain.Run {
		r := domain.Run{
			ID: ids.New(), AgentID: ids.New(), ThreadID: ids.New(), ChannelID: ids.New(), SpaceID: ids.New(),
			RequestedBy: ids.New(), State: state, Version: 1, CreatedAt: created, UpdatedAt: updated,
		}
		if state.Final() {
			r.EndedAt = updated
		}
		if err := store.InsertRun(ctx, r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
		return r
	}
	second := newRun(at.Add(time.Second), at.Add(time.Minute), domain.RunRunning)
	first := newRun(at, at, domain.RunQueued)
	third := newRun(at.Add(2*time.Second), cutoff.Add(-time.Microsecond), domain.RunQueued)
	newRun(at, cutoff, domain.RunRunning)                 // updated at the cutoff: not stale
	newRun(at, cutoff.Add(time.Minute), domain.RunQueued) // fresh
	newRun(at, at, domain.RunFailed)                      // finished
	newRun(at, at, domain.RunCancelled)                   // finished

	idsOf := func(rs []domain.Run) []uuid.UUID {
		out := make([]uuid.UUID, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	got, err := store.StaleRuns(ctx, cutoff, 10)
	if err != nil {
		t.Fatalf("StaleRuns: %v", err)
	}
	if want := []domain.Run{first, second, third}; !slices.Equal(got, want) {
		t.Fatalf("StaleRuns = %v, want %v", idsOf(got), idsOf(want))
	}
	if got, err := store.StaleRuns(ctx, cutoff, 2); err != nil || !slices.Equal(idsOf(got), []uuid.UUID{first.ID, second.ID}) {
		t.Fatalf("StaleRuns limited to 2 = %v, %v", idsOf(got), err)
	}

	// Locked until the transaction ends: a concurrent sweep skips what the first holds, and
	// a run under an update is skipped too.
	holding := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runner.RunInTx(ctx, func(ctx context.Context) error {
			if _, err := store.RunForUpdate(ctx, third.ID); err != nil {
				return err
			}
			held, err := store.StaleRuns(ctx, cutoff, 1)
			if err != nil {
				return err
			}
			if len(held) != 1 || held[0].ID != first.ID {
				t.Errorf("the first sweep got %v, want %s", idsOf(held), first.ID)
			}
			close(holding)
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-done:
		t.Fatalf("the holding transaction ended early: %v", err)
	}
	err = runner.RunInTx(ctx, func(ctx context.Context) error {
		got, err := store.StaleRuns(ctx, cutoff, 10)
		if err != nil {
			return err
		}
		if !slices.Equal(idsOf(got), []uuid.UUID{second.ID}) {
			t.Errorf("a concurrent sweep got %v, want only %s (the others are held)", idsOf(got), second.ID)
		}
		return nil
	})
	close(release)
	if err != nil {
		t.Fatalf("concurrent sweep: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("holding transaction: %v", err)
	}

	// The partial index on the runs in progress serves the query (with sequential scans off:
	// a table this small is read whole otherwise).
	var lines []string
	err = runner.RunInTx(ctx, func(ctx context.Context) error {
		db := runner.DB(ctx)
		if _, err := db.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		rows, err := db.Query(ctx, "EXPLAIN (COSTS OFF) "+agentspg.StaleRunsSQL, cutoff, 10)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "runs_in_progress") {
		t.Errorf("the stale runs' plan does not read runs_in_progress:\n%s", plan)
	}
}

// TestRunTableEnforcesItsRules: the checks of agents.runs refuse what the domain never writes.
func TestRunTableEnforcesItsRules(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	const insert = `INSERT INTO agents.runs (id, agent_id, thread_id, channel_id, requested_by, state, version, created_at, updated_at, ended_at, cancelled_by)
		VALUES ($1, $1, $1, $1, $1, $2, $3, now(), now() + $4::interval, $5, $6)`
	now := time.Now()
	tests := []struct {
		name        string
		state       string
		version     int
		updated     string
		ended       *time.Time
		cancelledBy *uuid.UUID
		ok          bool
	}{
		{"a queued run", "queued", 1, "0", nil, nil, true},
		{"an unknown state", "paused", 1, "0", nil, nil, false},
		{"version 0", "queued", 0, "0", nil, nil, false},
		{"updated before created", "queued", 1, "-1 day", nil, nil, false},
		{"a final run without an end", "succeeded", 2, "0", nil, nil, false},
		{"a run in progress with an end", "running", 2, "1 day", &now, nil, false},
		{"a succeeded run that names a canceller", "succeeded", 2, "1 day", &now, &uuid.Max, false},
		{"a cancelled run", "cancelled", 2, "1 day", &now, &uuid.Max, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := pool.Exec(t.Context(), insert, ids.New(), tc.state, tc.version, tc.updated, tc.ended, tc.cancelledBy)
			var pgErr *pgconn.PgError
			switch {
			case tc.ok && err != nil:
				t.Fatalf("insert = %v, want it stored", err)
			case !tc.ok && (!errors.As(err, &pgErr) || pgErr.Code != "23514"):
				t.Fatalf("insert = %v, want a check violation", err)
			}
		})
	}
}
