package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// TestPresenceStore: Lock creates a row once and returns it as saved; Due returns the rows
// never announced or announced at or before the cutoff; Of returns the rows of the ids given.
func TestPresenceStore(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	store := agentspg.NewPresenceStore(runner)
	at := time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC)
	robin, echo := ids.New(), ids.New()
	inTx := func(fn func(ctx context.Context) error) {
		t.Helper()
		if err := runner.RunInTx(t.Context(), fn); err != nil {
			t.Fatal(err)
		}
	}
	inTx(func(ctx context.Context) error {
		r, err := store.Lock(ctx, robin, at)
		if err != nil {
			return err
		}
		want := domain.PresenceRow{AgentID: robin, LastHeartbeatAt: at, AnnouncedState: domain.StateUnknown}
		if r != want {
			t.Errorf("a new row = %+v, want %+v", r, want)
		}
		r.ReportedBillingMode, r.AnnouncedState, r.AnnouncedBillingMode, r.AnnouncedAt = "metered", domain.StateOnline, "metered", at
		return store.Save(ctx, r)
	})
	inTx(func(ctx context.Context) error {
		_, err := store.Lock(ctx, echo, at.Add(time.Second)) // never announced
		return err
	})
	inTx(func(ctx context.Context) error {
		r, err := store.Lock(ctx, robin, at.Add(time.Hour)) // exists: unchanged by Lock
		if err != nil {
			return err
		}
		if r.LastHeartbeatAt != at || r.AnnouncedState != domain.StateOnline || r.ReportedBillingMode != "metered" || !r.AnnouncedAt.Equal(at) {
			t.Errorf("the saved row read back = %+v", r)
		}
		return nil
	})
	for _, tc := range []struct {
		cutoff time.Time
		want   []uuid.UUID
	}{
		{at.Add(-time.Second), []uuid.UUID{echo}},
		{at, []uuid.UUID{robin, echo}},
	} {
		inTx(func(ctx context.Context) error {
			rows, err := store.Due(ctx, tc.cutoff)
			if err != nil {
				return err
			}
			got := map[uuid.UUID]bool{}
			for _, r := range rows {
				got[r.AgentID] = true
			}
			if len(got) != len(tc.want) {
				t.Errorf("Due(%s) = %v, want %v", tc.cutoff, rows, tc.want)
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Errorf("Due(%s) lacks %s", tc.cutoff, id)
				}
			}
			return nil
		})
	}
	rows, err := store.Of(t.Context(), []uuid.UUID{robin, ids.New()})
	if err != nil || len(rows) != 1 || rows[0].AgentID != robin {
		t.Fatalf("Of = %+v, %v; want Robin's row", rows, err)
	}
}
