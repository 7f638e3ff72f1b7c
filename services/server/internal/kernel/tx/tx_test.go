package tx_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

var fixture = migrate.Set{Schema: "txtest", FS: fstest.MapFS{
	"0001_notes.sql": {Data: []byte(`CREATE SCHEMA txtest;
CREATE TABLE txtest.notes (id bigserial PRIMARY KEY, body text NOT NULL);
-- A deferred unique constraint fails at COMMIT, not at the INSERT.
CREATE TABLE txtest.deferred (k int, CONSTRAINT deferred_k UNIQUE (k) DEFERRABLE INITIALLY DEFERRED);`)},
}}

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, fixture)) }

var errBoom = errors.New("boom")

func setup(t *testing.T) (*tx.Runner, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.New(t)
	return tx.NewRunner(pool), pool
}

func insert(ctx context.Context, r *tx.Runner, body string) error {
	_, err := r.DB(ctx).Exec(ctx, "INSERT INTO txtest.notes (body) VALUES ($1)", body)
	return err
}

// notes reads the committed notes through the pool, outside any transaction.
func notes(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), "SELECT body FROM txtest.notes ORDER BY id")
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	return bodies
}

// recorder records calls from hooks and callbacks in order; safe for concurrent use.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (l *recorder) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *recorder) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

func TestRunInTxCommitsAndRollsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fn        func(ctx context.Context, r *tx.Runner) error
		wantErr   error
		wantNotes []string
	}{
		{
			name:      "commit persists",
			fn:        func(ctx context.Context, r *tx.Runner) error { return insert(ctx, r, "from Alex") },
			wantNotes: []string{"from Alex"},
		},
		{
			name: "fn error rolls back",
			fn: func(ctx context.Context, r *tx.Runner) error {
				if err := insert(ctx, r, "from Sam"); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
		},
		{
			name: "hook error rolls back fn and earlier hooks",
			fn: func(ctx context.Context, r *tx.Runner) error {
				if err := insert(ctx, r, "fn"); err != nil {
					return err
				}
				for _, h := range []func(context.Context) error{
					func(ctx context.Context) error { return insert(ctx, r, "hook 1") },
					func(ctx context.Context) error {
						if err := insert(ctx, r, "hook 2"); err != nil {
							return err
						}
						return errBoom
					},
					func(ctx context.Context) error { return insert(ctx, r, "hook 3") },
				} {
					if err := tx.OnCommitPhase(ctx, h); err != nil {
						return err
					}
				}
				return nil
			},
			wantErr: errBoom,
		},
		{
			name: "failed statement swallowed by fn fails the commit",
			fn: func(ctx context.Context, r *tx.Runner) error {
				if err := insert(ctx, r, "before"); err != nil {
					return err
				}
				_, _ = r.DB(ctx).Exec(ctx, "SELECT 1/0")
				return nil
			},
			wantErr: pgx.ErrTxCommitRollback,
		},
		{
			name: "deferred constraint fails at commit",
			fn: func(ctx context.Context, r *tx.Runner) error {
				if err := insert(ctx, r, "before"); err != nil {
					return err
				}
				_, err := r.DB(ctx).Exec(ctx, "INSERT INTO txtest.deferred VALUES (1), (1)")
				return err
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, pool := setup(t)
			var after recorder
			err := r.RunInTx(t.Context(), func(ctx context.Context) error {
				if err := tx.AfterCommit(ctx, func(context.Context) { after.add("after") }); err != nil {
					return err
				}
				return tc.fn(ctx, r)
			})
			committed := tc.wantNotes != nil
			switch {
			case committed && err != nil:
				t.Fatalf("RunInTx: %v", err)
			case !committed && err == nil:
				t.Fatal("RunInTx succeeded, want an error")
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if got := notes(t, pool); !slices.Equal(got, tc.wantNotes) {
				t.Errorf("notes = %v, want %v", got, tc.wantNotes)
			}
			if got, want := len(after.get()), map[bool]int{true: 1, false: 0}[committed]; got != want {
				t.Errorf("after-commit calls = %d, want %d", got, want)
			}
		})
	}
}

func TestHooksRunInOrderAfterFnAndSeeItsWrites(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	var calls recorder
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		for i := 1; i <= 3; i++ {
			err := tx.OnCommitPhase(ctx, func(ctx context.Context) error {
				var n int
				if err := r.DB(ctx).QueryRow(ctx, "SELECT count(*) FROM txtest.notes").Scan(&n); err != nil {
					return err
				}
				calls.add(fmt.Sprintf("hook %d sees %d", i, n))
				if i == 2 {
					// Registered during the commit phase: runs after the hooks already queued.
					return tx.OnCommitPhase(ctx, func(context.Context) error { calls.add("late hook"); return nil })
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := tx.AfterCommit(ctx, func(context.Context) { calls.add("after commit") }); err != nil {
			return err
		}
		if err := insert(ctx, r, "one"); err != nil {
			return err
		}
		calls.add("fn done")
		return insert(ctx, r, "two")
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	want := []string{"fn done", "hook 1 sees 2", "hook 2 sees 2", "hook 3 sees 2", "late hook", "after commit"}
	if got := calls.get(); !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if got := notes(t, pool); len(got) != 2 {
		t.Errorf("notes = %v", got)
	}
}

func TestAfterCommitSeesCommittedData(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	var seen []string
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := insert(ctx, r, "from Robin"); err != nil {
			return err
		}
		return tx.AfterCommit(ctx, func(ctx context.Context) {
			// Outside the transaction now: the pool, another connection, sees the commit.
			if _, inTx := r.DB(ctx).(pgx.Tx); inTx {
				t.Error("after-commit context still carries the transaction")
			}
			seen = notes(t, pool)
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if !slices.Equal(seen, []string{"from Robin"}) {
		t.Errorf("after commit saw %v", seen)
	}
}

func TestCommitPhaseChecks(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	type result struct {
		in  bool
		err error
	}
	check := func(ctx context.Context) result {
		return result{in: tx.InCommitPhase(ctx), err: tx.RequireCommitPhase(ctx)}
	}
	var inFn, inHook, inNestedHook, inAfter result
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		inFn = check(ctx)
		if err := tx.AfterCommit(ctx, func(ctx context.Context) { inAfter = check(ctx) }); err != nil {
			return err
		}
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
			inHook = check(ctx)
			return r.RunInTx(ctx, func(ctx context.Context) error {
				inNestedHook = check(ctx)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	tests := []struct {
		name    string
		got     result
		wantIn  bool
		wantErr error
	}{
		{name: "outside", got: check(t.Context()), wantErr: tx.ErrNoTransaction},
		{name: "in fn", got: inFn, wantErr: tx.ErrNotInCommitPhase},
		{name: "in hook", got: inHook, wantIn: true},
		{name: "nested call in hook", got: inNestedHook, wantIn: true},
		{name: "after commit", got: inAfter, wantErr: tx.ErrNoTransaction},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got.in != tc.wantIn || !errors.Is(tc.got.err, tc.wantErr) {
				t.Errorf("InCommitPhase %v, RequireCommitPhase %v; want %v, %v", tc.got.in, tc.got.err, tc.wantIn, tc.wantErr)
			}
		})
	}
}

func TestRegistrationOutsideTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	if err := tx.OnCommitPhase(ctx, func(context.Context) error { return nil }); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("OnCommitPhase outside = %v, want ErrNoTransaction", err)
	}
	if err := tx.AfterCommit(ctx, func(context.Context) {}); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("AfterCommit outside = %v, want ErrNoTransaction", err)
	}
}

func TestDBChoosesTransactionOrPool(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	// Outside a transaction the DB is the pool (its errors classified): no pgx.Tx, and a
	// statement on it sees no transaction.
	outside := r.DB(t.Context())
	if _, inTx := outside.(pgx.Tx); inTx {
		t.Errorf("DB outside a transaction = %T, want the pool", outside)
	}
	var first, second int64
	if err := outside.QueryRow(t.Context(), "SELECT txid_current()").Scan(&first); err != nil {
		t.Fatalf("txid: %v", err)
	}
	if err := outside.QueryRow(t.Context(), "SELECT txid_current()").Scan(&second); err != nil || first == second {
		t.Errorf("two statements outside a transaction ran in one (txid %d, %d, %v)", first, second, err)
	}
	var leaked context.Context
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		leaked = ctx
		if _, ok := r.DB(ctx).(pgx.Tx); !ok {
			t.Errorf("DB inside = %T, want pgx.Tx", r.DB(ctx))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	// A context kept past its transaction must not silently write outside it.
	if _, err := r.DB(leaked).Exec(t.Context(), "SELECT 1"); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("DB of a finished transaction: err = %v, want pgx.ErrTxClosed", err)
	}
	if err := tx.OnCommitPhase(leaked, func(context.Context) error { return nil }); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("OnCommitPhase after the end = %v, want ErrNoTransaction", err)
	}
}

func TestNestedRunInTxJoins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		innerErr  error
		outerErr  error
		wantNotes []string
	}{
		{name: "both succeed", wantNotes: []string{"outer", "inner"}},
		{name: "inner error propagates", innerErr: errBoom},
		{name: "outer error undoes inner writes", outerErr: errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, pool := setup(t)
			var outerXID, innerXID int64
			var innerHook bool
			err := r.RunInTx(t.Context(), func(ctx context.Context) error {
				if err := insert(ctx, r, "outer"); err != nil {
					return err
				}
				if err := r.DB(ctx).QueryRow(ctx, "SELECT txid_current()").Scan(&outerXID); err != nil {
					return err
				}
				err := r.RunInTx(ctx, func(ctx context.Context) error {
					if err := insert(ctx, r, "inner"); err != nil {
						return err
					}
					if err := tx.OnCommitPhase(ctx, func(context.Context) error { innerHook = true; return nil }); err != nil {
						return err
					}
					if err := r.DB(ctx).QueryRow(ctx, "SELECT txid_current()").Scan(&innerXID); err != nil {
						return err
					}
					return tc.innerErr
				})
				if !errors.Is(err, tc.innerErr) {
					t.Errorf("nested RunInTx = %v, want %v", err, tc.innerErr)
				}
				if err != nil {
					return err
				}
				return tc.outerErr
			})
			wantErr := errors.Join(tc.innerErr, tc.outerErr)
			if (err == nil) != (wantErr == nil) || (wantErr != nil && !errors.Is(err, errBoom)) {
				t.Errorf("RunInTx = %v, want %v", err, wantErr)
			}
			if outerXID == 0 || innerXID != outerXID {
				t.Errorf("inner transaction %d, outer %d: want the same", innerXID, outerXID)
			}
			if got := notes(t, pool); !slices.Equal(got, tc.wantNotes) {
				t.Errorf("notes = %v, want %v", got, tc.wantNotes)
			}
			if innerHook != (wantErr == nil) {
				t.Errorf("inner hook ran = %v, want %v", innerHook, wantErr == nil)
			}
		})
	}
}

func TestRolledBackTransactionLeavesNothing(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	base := t.Context()
	var hooks, afters int
	err := r.RunInTx(base, func(ctx context.Context) error {
		if err := tx.OnCommitPhase(ctx, func(ctx context.Context) error { hooks++; return insert(ctx, r, "hook") }); err != nil {
			return err
		}
		if err := tx.AfterCommit(ctx, func(context.Context) { afters++ }); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want errBoom", err)
	}
	if hooks != 0 || afters != 0 {
		t.Errorf("after a rollback: %d hook calls, %d after-commit calls; want none", hooks, afters)
	}
	// The next transaction on the same base context starts clean.
	err = r.RunInTx(base, func(ctx context.Context) error { return insert(ctx, r, "next") })
	if err != nil {
		t.Fatalf("next RunInTx: %v", err)
	}
	if hooks != 0 || afters != 0 {
		t.Errorf("the next transaction ran %d old hooks and %d old after-commit funcs", hooks, afters)
	}
	if got := notes(t, pool); !slices.Equal(got, []string{"next"}) {
		t.Errorf("notes = %v, want [next]", got)
	}
}

func TestPanicRollsBackAndRepanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(ctx context.Context, r *tx.Runner) error
	}{
		{name: "in fn", fn: func(ctx context.Context, r *tx.Runner) error {
			if err := insert(ctx, r, "doomed"); err != nil {
				return err
			}
			panic("Sam pulled the plug")
		}},
		{name: "in hook", fn: func(ctx context.Context, r *tx.Runner) error {
			if err := insert(ctx, r, "doomed"); err != nil {
				return err
			}
			return tx.OnCommitPhase(ctx, func(context.Context) error { panic("Sam pulled the plug") })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, pool := setup(t)
			afters := 0
			recovered := func() (p any) {
				defer func() { p = recover() }()
				_ = r.RunInTx(t.Context(), func(ctx context.Context) error {
					if err := tx.AfterCommit(ctx, func(context.Context) { afters++ }); err != nil {
						return err
					}
					return tc.fn(ctx, r)
				})
				return nil
			}()
			if s, _ := recovered.(string); !strings.Contains(s, "pulled the plug") {
				t.Errorf("recovered %v, want the original panic", recovered)
			}
			if afters != 0 {
				t.Errorf("after-commit ran %d times after a panic", afters)
			}
			if got := notes(t, pool); len(got) != 0 {
				t.Errorf("notes = %v, want none", got)
			}
			// The connection went back to the pool usable.
			if err := r.RunInTx(t.Context(), func(ctx context.Context) error { return insert(ctx, r, "after panic") }); err != nil {
				t.Errorf("RunInTx after panic: %v", err)
			}
		})
	}
}

func TestConcurrentTransactionsKeepTheirOwnHooks(t *testing.T) {
	t.Parallel()
	r, pool := setup(t)
	const workers = 16
	var wg sync.WaitGroup
	ran := make([][]int, workers)
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			errs[w] = r.RunInTx(t.Context(), func(ctx context.Context) error {
				for range 3 {
					if err := tx.OnCommitPhase(ctx, func(ctx context.Context) error {
						ran[w] = append(ran[w], w)
						return insert(ctx, r, fmt.Sprintf("worker %d", w))
					}); err != nil {
						return err
					}
				}
				if w%4 == 3 {
					return errBoom
				}
				return nil
			})
		})
	}
	wg.Wait()
	committed := 0
	for w := range workers {
		failed := w%4 == 3
		if failed != errors.Is(errs[w], errBoom) || (!failed && errs[w] != nil) {
			t.Errorf("worker %d: err = %v", w, errs[w])
		}
		want := []int{w, w, w}
		if failed {
			want = nil
		} else {
			committed++
		}
		if !slices.Equal(ran[w], want) {
			t.Errorf("worker %d ran hooks %v, want %v", w, ran[w], want)
		}
	}
	if got := notes(t, pool); len(got) != 3*committed {
		t.Errorf("notes = %d, want %d", len(got), 3*committed)
	}
}
