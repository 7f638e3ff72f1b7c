package tx_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/kernel/tx"
)

// TestQueueFinalCommitsWithItsStatements: statements queued by last hooks run after every hook,
// in registration order, and commit together with fn's writes; the pool gets its connection
// back.
func TestQueueFinalCommitsWithItsStatements(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	queue := func(body string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return tx.QueueFinal(ctx, "INSERT INTO txtest.notes (body) VALUES ($1)", body)
		}
	}
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := insert(ctx, r, "fn"); err != nil {
			return err
		}
		if err := tx.OnCommitPhaseLast(ctx, queue("final 1")); err != nil {
			return err
		}
		if err := tx.OnCommitPhaseLast(ctx, queue("final 2")); err != nil {
			return err
		}
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error { return insert(ctx, r, "hook") })
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if want := []string{"fn", "hook", "final 1", "final 2"}; !slices.Equal(notes(t, pool), want) {
		t.Errorf("notes = %v, want %v", notes(t, pool), want)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("acquired connections after the commit = %d, want 0", n)
	}
}

// TestQueueFinalFailureRollsBackEverything: a queued statement that fails in the server fails
// RunInTx with the server's error, leaves nothing of the transaction, runs no AfterCommit
// callback, and the pool gets a usable connection back.
func TestQueueFinalFailureRollsBackEverything(t *testing.T) {
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
			if err := tx.QueueFinal(ctx, "INSERT INTO txtest.notes (body) VALUES ('final')"); err != nil {
				return err
			}
			return tx.QueueFinal(ctx, "SELECT 1 / 0")
		})
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("RunInTx = %v, want division_by_zero", err)
	}
	if got := notes(t, pool); len(got) != 0 {
		t.Errorf("notes after the failed commit = %v, want none", got)
	}
	if afters != 0 {
		t.Errorf("AfterCommit ran %d times after a failed commit", afters)
	}
	if err := r.RunInTx(t.Context(), func(ctx context.Context) error { return insert(ctx, r, "next") }); err != nil {
		t.Fatalf("next RunInTx: %v", err)
	}
	if got := notes(t, pool); !slices.Equal(got, []string{"next"}) {
		t.Errorf("notes = %v, want [next]", got)
	}
}

// TestQueueFinalOnlyFromLastHooks: the final statements are for last hooks only, after which
// nothing but COMMIT follows.
func TestQueueFinalOnlyFromLastHooks(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	if err := tx.QueueFinal(t.Context(), "SELECT 1"); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("QueueFinal outside a transaction = %v, want ErrNoTransaction", err)
	}
	var inFn, inHook error
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		inFn = tx.QueueFinal(ctx, "SELECT 1")
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
			inHook = tx.QueueFinal(ctx, "SELECT 1")
			return nil
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if !errors.Is(inFn, tx.ErrNotInCommitPhase) {
		t.Errorf("QueueFinal in fn = %v, want ErrNotInCommitPhase", inFn)
	}
	if !errors.Is(inHook, tx.ErrNotInCommitPhase) {
		t.Errorf("QueueFinal in an ordinary hook = %v, want ErrNotInCommitPhase", inHook)
	}
}

// TestClosedTransactionRefusesEveryStatement: a context kept past its transaction gets
// pgx.ErrTxClosed from every DB method, never a statement on the connection's next user.
func TestClosedTransactionRefusesEveryStatement(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	var leaked context.Context
	if err := r.RunInTx(t.Context(), func(ctx context.Context) error { leaked = ctx; return nil }); err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	ctx := t.Context()
	db := r.DB(leaked)
	_, execErr := db.Exec(ctx, "SELECT 1")
	_, queryErr := db.Query(ctx, "SELECT 1")
	rowErr := db.QueryRow(ctx, "SELECT 1").Scan(new(int))
	_, copyErr := db.CopyFrom(ctx, pgx.Identifier{"txtest", "notes"}, []string{"body"}, pgx.CopyFromRows(nil))
	br := db.SendBatch(ctx, &pgx.Batch{})
	_, bExecErr := br.Exec()
	_, bQueryErr := br.Query()
	bRowErr := br.QueryRow().Scan(new(int))
	for name, err := range map[string]error{
		"Exec": execErr, "Query": queryErr, "QueryRow": rowErr, "CopyFrom": copyErr,
		"batch Exec": bExecErr, "batch Query": bQueryErr, "batch QueryRow": bRowErr, "batch Close": br.Close(),
	} {
		if !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("%s on a closed transaction = %v, want pgx.ErrTxClosed", name, err)
		}
	}
	if br.Tx() != nil {
		t.Errorf("batch Tx on a closed transaction = %v, want nil", br.Tx())
	}
}
