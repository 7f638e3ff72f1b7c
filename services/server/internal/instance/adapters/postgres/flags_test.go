package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestFlagStoreReportsChanges(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	agents := instance.KindTarget(actor.KindAgent)
	alex := instance.PrincipalTarget(ids.New())
	steps := []struct {
		name string
		run  func(ctx context.Context) (bool, error)
		want bool
	}{
		{"create", func(ctx context.Context) (bool, error) { return e.store.PutFlag(ctx, "threads.summaries", "", false) }, true},
		{"same values", func(ctx context.Context) (bool, error) { return e.store.PutFlag(ctx, "threads.summaries", "", false) }, false},
		{"new default", func(ctx context.Context) (bool, error) { return e.store.PutFlag(ctx, "threads.summaries", "", true) }, true},
		{"kind override", func(ctx context.Context) (bool, error) {
			return e.store.PutOverride(ctx, "threads.summaries", agents, true)
		}, true},
		{"same kind override", func(ctx context.Context) (bool, error) {
			return e.store.PutOverride(ctx, "threads.summaries", agents, true)
		}, false},
		{"principal override", func(ctx context.Context) (bool, error) {
			return e.store.PutOverride(ctx, "threads.summaries", alex, false)
		}, true},
		{"flipped principal override", func(ctx context.Context) (bool, error) {
			return e.store.PutOverride(ctx, "threads.summaries", alex, true)
		}, true},
		{"clear kind override", func(ctx context.Context) (bool, error) {
			return e.store.DeleteOverride(ctx, "threads.summaries", agents)
		}, true},
		{"clear it again", func(ctx context.Context) (bool, error) {
			return e.store.DeleteOverride(ctx, "threads.summaries", agents)
		}, false},
		{"delete the flag", func(ctx context.Context) (bool, error) { return e.store.DeleteFlag(ctx, "threads.summaries") }, true},
		{"delete it again", func(ctx context.Context) (bool, error) { return e.store.DeleteFlag(ctx, "threads.summaries") }, false},
	}
	// Sequential on purpose: each step sees the state the one before left.
	for _, s := range steps {
		got, err := s.run(ctx)
		if err != nil || got != s.want {
			t.Fatalf("%s: changed = %v, %v; want %v", s.name, got, err, s.want)
		}
	}
	// The flag's overrides went with it (ON DELETE CASCADE), so a new flag of the same key
	// starts clean.
	if _, err := e.store.PutFlag(ctx, "threads.summaries", "", false); err != nil {
		t.Fatalf("PutFlag: %v", err)
	}
	flag, err := e.store.GetFlag(ctx, "threads.summaries")
	if err != nil || len(flag.Overrides) != 0 || flag.Version != 1 {
		t.Fatalf("recreated flag = %+v, %v; want version 1 without overrides", flag, err)
	}
}

func TestFlagStoreMissingFlag(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	if _, err := e.store.GetFlag(ctx, "threads.missing"); !errors.Is(err, instance.ErrFlagNotFound) {
		t.Fatalf("GetFlag = %v, want ErrFlagNotFound", err)
	}
	if err := e.store.TouchFlag(ctx, "threads.missing"); !errors.Is(err, instance.ErrFlagNotFound) {
		t.Fatalf("TouchFlag = %v, want ErrFlagNotFound", err)
	}
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		return e.store.LockFlag(ctx, "threads.missing")
	})
	if !errors.Is(err, instance.ErrFlagNotFound) {
		t.Fatalf("LockFlag = %v, want ErrFlagNotFound", err)
	}
	// An override of a missing flag is refused by the foreign key, not stored.
	var pgErr *pgconn.PgError
	if _, err := e.store.PutOverride(ctx, "threads.missing", instance.KindTarget(actor.KindApp), true); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Fatalf("PutOverride on a missing flag = %v, want a foreign key violation", err)
	}
}

func TestFlagStoreRefusesInvalidTargets(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	for _, target := range []instance.FlagTarget{{}, {Kind: "robot"}, {Kind: actor.KindApp, PrincipalID: ids.New()}} {
		if _, err := e.store.PutOverride(ctx, "threads.summaries", target, true); !errors.Is(err, problem.ErrValidation) {
			t.Fatalf("PutOverride(%+v) = %v, want a validation error", target, err)
		}
		if _, err := e.store.DeleteOverride(ctx, "threads.summaries", target); !errors.Is(err, problem.ErrValidation) {
			t.Fatalf("DeleteOverride(%+v) = %v, want a validation error", target, err)
		}
	}
}

func TestFlagTablesEnforceTheirRules(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.store.PutFlag(t.Context(), "threads.summaries", "", false); err != nil {
		t.Fatalf("PutFlag: %v", err)
	}
	tests := []struct {
		name string
		sql  string
		args []any
	}{
		{"key syntax", "INSERT INTO instance.feature_flags (key, default_enabled) VALUES ('Bad Key', true)", nil},
		{"description length", "INSERT INTO instance.feature_flags (key, description, default_enabled) VALUES ('k', repeat('d', 501), true)", nil},
		{"no target", "INSERT INTO instance.feature_flag_overrides (flag_key, enabled) VALUES ('threads.summaries', true)", nil},
		{"two targets", "INSERT INTO instance.feature_flag_overrides (flag_key, principal_kind, principal_id, enabled) VALUES ('threads.summaries', 'agent', $1, true)", []any{ids.New()}},
		{"unknown kind", "INSERT INTO instance.feature_flag_overrides (flag_key, principal_kind, enabled) VALUES ('threads.summaries', 'robot', true)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pgErr *pgconn.PgError
			if _, err := e.pool.Exec(t.Context(), tc.sql, tc.args...); !errors.As(err, &pgErr) || pgErr.Code != "23514" {
				t.Fatalf("insert = %v, want a check violation", err)
			}
		})
	}
	// A second override of the same target is a unique violation.
	for _, sql := range []string{
		"INSERT INTO instance.feature_flag_overrides (flag_key, principal_kind, enabled) VALUES ('threads.summaries', 'agent', true)",
		"INSERT INTO instance.feature_flag_overrides (flag_key, principal_id, enabled) VALUES ('threads.summaries', '0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77', true)",
	} {
		if _, err := e.pool.Exec(t.Context(), sql); err != nil {
			t.Fatalf("first override: %v", err)
		}
		var pgErr *pgconn.PgError
		if _, err := e.pool.Exec(t.Context(), sql); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("second override = %v, want a unique violation", err)
		}
	}
}
