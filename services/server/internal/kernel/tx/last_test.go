package tx_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"bothy.example.com/server/internal/kernel/tx"
)

func TestLastHooksRunAfterEveryOrdinaryHook(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	var calls recorder
	var lateOrdinary error
	var inPhase []bool
	hook := func(name string, then func(ctx context.Context) error) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			calls.add(name)
			inPhase = append(inPhase, tx.InCommitPhase(ctx) && tx.RequireCommitPhase(ctx) == nil)
			if then == nil {
				return nil
			}
			return then(ctx)
		}
	}
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		// Registered first, still runs after every ordinary hook.
		if err := tx.OnCommitPhaseLast(ctx, hook("last 1", func(ctx context.Context) error {
			// A last hook may queue another last hook: it runs after those already queued.
			if err := tx.OnCommitPhaseLast(ctx, hook("last 3", nil)); err != nil {
				return err
			}
			// An ordinary hook is too late now: it would run after a last hook.
			lateOrdinary = tx.OnCommitPhase(ctx, hook("too late", nil))
			return nil
		})); err != nil {
			return err
		}
		if err := tx.OnCommitPhase(ctx, hook("hook 1", func(ctx context.Context) error {
			if err := tx.OnCommitPhaseLast(ctx, hook("last 2", nil)); err != nil {
				return err
			}
			// Registered during the phase by an ordinary hook: still before every last hook.
			return tx.OnCommitPhase(ctx, hook("hook 3", func(ctx context.Context) error { return insert(ctx, r, "hook 3") }))
		})); err != nil {
			return err
		}
		return tx.OnCommitPhase(ctx, hook("hook 2", nil))
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	want := []string{"hook 1", "hook 2", "hook 3", "last 1", "last 2", "last 3"}
	if got := calls.get(); !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if !errors.Is(lateOrdinary, tx.ErrLastHooksRunning) {
		t.Errorf("OnCommitPhase from a last hook = %v, want ErrLastHooksRunning", lateOrdinary)
	}
	for i, in := range inPhase {
		if !in {
			t.Errorf("hook %d: not in the commit phase", i+1)
		}
	}
	if got := notes(t, pool); !slices.Equal(got, []string{"hook 3"}) {
		t.Errorf("notes = %v, want [hook 3]", got)
	}
}

func TestLastHookErrorRollsBack(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	afters := 0
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := insert(ctx, r, "fn"); err != nil {
			return err
		}
		if err := tx.AfterCommit(ctx, func(context.Context) { afters++ }); err != nil {
			return err
		}
		return tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error {
			if err := insert(ctx, r, "last"); err != nil {
				return err
			}
			return errBoom
		})
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want errBoom", err)
	}
	if got := notes(t, pool); len(got) != 0 {
		t.Errorf("notes = %v, want none", got)
	}
	if afters != 0 {
		t.Errorf("after-commit ran %d times after a rollback", afters)
	}
}

func TestLastHooksOfARolledBackTransactionNeverRun(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	ran := false
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := tx.OnCommitPhaseLast(ctx, func(context.Context) error { ran = true; return nil }); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want errBoom", err)
	}
	if ran {
		t.Error("a last hook ran although fn failed")
	}
	if err := tx.OnCommitPhaseLast(t.Context(), func(context.Context) error { return nil }); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("OnCommitPhaseLast outside = %v, want ErrNoTransaction", err)
	}
}
