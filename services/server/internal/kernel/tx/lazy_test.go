package tx_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/tx"
)

// errUndo rolls a test transaction back on purpose.
var errUndo = errors.New("undo")

// TestFirstStatementBeginsTheTransaction: whatever a transaction's first statement is (Exec,
// Query, QueryRow, a batch, COPY), it runs inside the transaction that BEGIN, sent with it,
// opened: a later statement sees the same transaction id, a rollback undoes the first
// statement's write, and a commit keeps it.
func TestFirstStatementBeginsTheTransaction(t *testing.T) {
	t.Parallel()
	first := map[string]func(ctx context.Context, db tx.DB) error{
		"Exec": func(ctx context.Context, db tx.DB) error {
			_, err := db.Exec(ctx, "INSERT INTO txtest.notes (body) VALUES ($1)", "first")
			return err
		},
		"Query": func(ctx context.Context, db tx.DB) error {
			rows, err := db.Query(ctx, "INSERT INTO txtest.notes (body) VALUES ($1) RETURNING body", "first")
			if err != nil {
				return err
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err == nil && !slices.Equal(got, []string{"first"}) {
				err = errors.New("unexpected rows")
			}
			return err
		},
		"QueryRow": func(ctx context.Context, db tx.DB) error {
			var body string
			return db.QueryRow(ctx, "INSERT INTO txtest.notes (body) VALUES ($1) RETURNING body", "first").Scan(&body)
		},
		"SendBatch": func(ctx context.Context, db tx.DB) error {
			b := &pgx.Batch{}
			b.Queue("INSERT INTO txtest.notes (body) VALUES ($1)", "first")
			b.Queue("SELECT 1")
			br := db.SendBatch(ctx, b)
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return err
			}
			var one int
			if err := br.QueryRow().Scan(&one); err != nil {
				_ = br.Close()
				return err
			}
			return br.Close()
		},
		"CopyFrom": func(ctx context.Context, db tx.DB) error {
			_, err := db.CopyFrom(ctx, pgx.Identifier{"txtest", "notes"}, []string{"body"}, pgx.CopyFromRows([][]any{{"first"}}))
			return err
		},
	}
	for name, run := range first {
		for _, commit := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r, pool := setup(t)
				err := r.RunInTx(t.Context(), func(ctx context.Context) error {
					db := r.DB(ctx)
					var before, after int64
					if err := run(ctx, db); err != nil {
						return err
					}
					if err := db.QueryRow(ctx, "SELECT txid_current_if_assigned()").Scan(&before); err != nil {
						return err
					}
					if err := insert(ctx, r, "second"); err != nil {
						return err
					}
					if err := db.QueryRow(ctx, "SELECT txid_current()").Scan(&after); err != nil {
						return err
					}
					if before == 0 || before != after {
						t.Errorf("transaction ids %d and %d, want one assigned by the first statement", before, after)
					}
					if !commit {
						return errUndo
					}
					return nil
				})
				want := []string{"first", "second"}
				if !commit {
					want = []string{}
					if !errors.Is(err, errUndo) {
						t.Fatalf("RunInTx = %v, want the rollback's cause", err)
					}
				} else if err != nil {
					t.Fatalf("RunInTx: %v", err)
				}
				if got := notes(t, pool); !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
					t.Errorf("notes = %v, want %v", got, want)
				}
				if n := pool.Stat().AcquiredConns(); n != 0 {
					t.Errorf("acquired connections after the end = %d, want 0", n)
				}
			})
		}
	}
}

// TestFirstStatementFailure: a first statement that fails in the server fails the
// transaction with the server's error, and the connection goes back to the pool usable.
func TestFirstStatementFailure(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]func(ctx context.Context, db tx.DB) error{
		"Exec": func(ctx context.Context, db tx.DB) error {
			_, err := db.Exec(ctx, "INSERT INTO txtest.missing (body) VALUES ($1)", "x")
			return err
		},
		"Query": func(ctx context.Context, db tx.DB) error {
			rows, err := db.Query(ctx, "SELECT body FROM txtest.missing")
			if err != nil {
				return err
			}
			_, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		},
		"QueryRow": func(ctx context.Context, db tx.DB) error {
			var body string
			return db.QueryRow(ctx, "SELECT body FROM txtest.missing").Scan(&body)
		},
		"QueryRow without a row": func(ctx context.Context, db tx.DB) error {
			var body string
			return db.QueryRow(ctx, "SELECT body FROM txtest.notes WHERE false").Scan(&body)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, pool := setup(t)
			err := r.RunInTx(t.Context(), func(ctx context.Context) error { return run(ctx, r.DB(ctx)) })
			if err == nil {
				t.Fatal("RunInTx succeeded, want the statement's error")
			}
			if name == "QueryRow without a row" && !errors.Is(err, pgx.ErrNoRows) {
				t.Errorf("RunInTx = %v, want pgx.ErrNoRows", err)
			}
			if err := r.RunInTx(t.Context(), func(ctx context.Context) error { return insert(ctx, r, "after") }); err != nil {
				t.Fatalf("the next transaction: %v", err)
			}
			if got := notes(t, pool); !slices.Equal(got, []string{"after"}) {
				t.Errorf("notes = %v, want [after]", got)
			}
		})
	}
}

// TestTransactionWithoutStatements: a transaction that runs no statement commits and rolls
// back without error, and its DB refuses to nest a transaction of its own.
func TestTransactionWithoutStatements(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		inner, ok := r.DB(ctx).(pgx.Tx)
		if !ok {
			t.Fatalf("DB inside = %T, want pgx.Tx", r.DB(ctx))
		}
		if _, err := inner.Begin(ctx); err == nil {
			t.Error("Begin on the runner's transaction succeeded, want a refusal")
		}
		if inner.Conn() == nil {
			t.Error("Conn = nil")
		}
		if _, err := inner.Prepare(ctx, "", "SELECT 1"); err != nil {
			t.Errorf("Prepare: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if err := r.RunInTx(t.Context(), func(context.Context) error { return errUndo }); !errors.Is(err, errUndo) {
		t.Fatalf("RunInTx = %v, want errUndo", err)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("acquired connections = %d, want 0", n)
	}
}
