package tx_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/tx"
)

// endCall is what an OnEnd function saw when it ran.
type endCall struct {
	notes    []string // the committed notes, read through the pool
	inTx     bool     // its context still carried the transaction
	ctxErr   error    // its context's Err
	afterRan bool     // an after-commit callback had run before it
}

func TestOnEndRunsOnceWhateverTheOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// fn is the transaction's function; cancel cancels the context RunInTx was called with.
		fn        func(ctx context.Context, r *tx.Runner, cancel context.CancelFunc) error
		committed bool
		panics    bool
		wantErr   error
	}{
		{
			name: "commit",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				return insert(ctx, r, "from Alex")
			},
			committed: true,
		},
		{
			name: "fn error",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "from Sam"); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
		},
		{
			name: "hook error",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "from Sam"); err != nil {
					return err
				}
				return tx.OnCommitPhase(ctx, func(context.Context) error { return errBoom })
			},
			wantErr: errBoom,
		},
		{
			name: "last hook error",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "from Sam"); err != nil {
					return err
				}
				return tx.OnCommitPhaseLast(ctx, func(context.Context) error { return errBoom })
			},
			wantErr: errBoom,
		},
		{
			name: "commit failure",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "from Robin"); err != nil {
					return err
				}
				// The deferred unique constraint fails at COMMIT.
				_, err := r.DB(ctx).Exec(ctx, "INSERT INTO txtest.deferred VALUES (1), (1)")
				return err
			},
		},
		{
			name: "caller's context cancelled in the commit phase",
			fn: func(ctx context.Context, r *tx.Runner, cancel context.CancelFunc) error {
				if err := insert(ctx, r, "from Robin"); err != nil {
					return err
				}
				return tx.OnCommitPhaseLast(ctx, func(context.Context) error { cancel(); return nil })
			},
			wantErr: context.Canceled,
		},
		{
			name: "panic in fn",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "doomed"); err != nil {
					return err
				}
				panic("Sam pulled the plug")
			},
			panics: true,
		},
		{
			name: "panic in a last hook",
			fn: func(ctx context.Context, r *tx.Runner, _ context.CancelFunc) error {
				if err := insert(ctx, r, "doomed"); err != nil {
					return err
				}
				return tx.OnCommitPhaseLast(ctx, func(context.Context) error { panic("Sam pulled the plug") })
			},
			panics: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, pool := setup(t)
			base, cancel := context.WithCancel(t.Context())
			defer cancel()
			var calls []endCall
			afterRan := false
			var err error
			recovered := func() (p any) {
				defer func() { p = recover() }()
				err = r.RunInTx(base, func(ctx context.Context) error {
					if err := tx.AfterCommit(ctx, func(context.Context) { afterRan = true }); err != nil {
						return err
					}
					if err := tx.OnEnd(ctx, func(ctx context.Context) {
						_, inTx := r.DB(ctx).(pgx.Tx)
						calls = append(calls, endCall{notes: notes(t, pool), inTx: inTx, ctxErr: ctx.Err(), afterRan: afterRan})
					}); err != nil {
						return err
					}
					return tc.fn(ctx, r, cancel)
				})
				return nil
			}()
			switch {
			case tc.panics:
				if s, _ := recovered.(string); !strings.Contains(s, "pulled the plug") {
					t.Errorf("recovered %v, want the original panic", recovered)
				}
			case recovered != nil:
				t.Fatalf("RunInTx panicked: %v", recovered)
			case tc.committed && err != nil:
				t.Fatalf("RunInTx: %v", err)
			case !tc.committed && err == nil:
				t.Fatal("RunInTx succeeded, want an error")
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("RunInTx = %v, want %v", err, tc.wantErr)
			}
			if len(calls) != 1 {
				t.Fatalf("OnEnd function ran %d times, want once", len(calls))
			}
			c := calls[0]
			wantNotes := map[bool][]string{true: {"from Alex"}}[tc.committed]
			if !slices.Equal(c.notes, wantNotes) {
				t.Errorf("OnEnd function saw notes %v, want %v (it runs once the transaction ended)", c.notes, wantNotes)
			}
			if c.inTx {
				t.Error("OnEnd function's context still carries the transaction")
			}
			if c.ctxErr != nil {
				t.Errorf("OnEnd function's context ended (%v); cleanup must run even when the caller's has", c.ctxErr)
			}
			if c.afterRan {
				t.Error("an after-commit callback ran before the OnEnd function")
			}
			if afterRan != tc.committed {
				t.Errorf("after-commit ran = %v, want %v", afterRan, tc.committed)
			}
		})
	}
}

func TestOnEndRunsInRegistrationOrderAlsoFromHooks(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	var calls recorder
	end := func(name string) func(context.Context) { return func(context.Context) { calls.add(name) } }
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := tx.OnEnd(ctx, end("end from fn")); err != nil {
			return err
		}
		if err := tx.AfterCommit(ctx, func(context.Context) { calls.add("after commit") }); err != nil {
			return err
		}
		if err := tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error {
			calls.add("last hook")
			return tx.OnEnd(ctx, end("end from last hook"))
		}); err != nil {
			return err
		}
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
			calls.add("hook")
			return tx.OnEnd(ctx, end("end from hook"))
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	want := []string{"hook", "last hook", "end from fn", "end from hook", "end from last hook", "after commit"}
	if got := calls.get(); !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
}

func TestOnEndOfANestedCallRunsAtTheOuterEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		innerErr error
		outerErr error
	}{
		{name: "both succeed"},
		{name: "inner error propagates", innerErr: errBoom},
		{name: "outer error after a successful inner call", outerErr: errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _ := setup(t)
			ends := 0
			endsAfterInner := -1
			err := r.RunInTx(t.Context(), func(ctx context.Context) error {
				err := r.RunInTx(ctx, func(ctx context.Context) error {
					if err := tx.OnEnd(ctx, func(context.Context) { ends++ }); err != nil {
						return err
					}
					return tc.innerErr
				})
				endsAfterInner = ends
				if err != nil {
					return err
				}
				return tc.outerErr
			})
			if wantErr := errors.Join(tc.innerErr, tc.outerErr); (err == nil) != (wantErr == nil) {
				t.Errorf("RunInTx = %v, want %v", err, wantErr)
			}
			if endsAfterInner != 0 {
				t.Errorf("OnEnd function ran %d times when the nested call returned, want 0 (the outer transaction was still open)", endsAfterInner)
			}
			if ends != 1 {
				t.Errorf("OnEnd function ran %d times after the outer transaction, want once", ends)
			}
		})
	}
}

func TestOnEndOutsideAnOpenTransaction(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	noop := func(context.Context) {}
	if err := tx.OnEnd(t.Context(), noop); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("OnEnd outside = %v, want ErrNoTransaction", err)
	}
	var leaked context.Context
	var inEnd error
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		leaked = ctx
		// Registering from an OnEnd function is too late: the transaction has ended.
		return tx.OnEnd(ctx, func(context.Context) { inEnd = tx.OnEnd(leaked, noop) })
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if !errors.Is(inEnd, tx.ErrNoTransaction) {
		t.Errorf("OnEnd from an OnEnd function = %v, want ErrNoTransaction", inEnd)
	}
	if err := tx.OnEnd(leaked, noop); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("OnEnd after the end = %v, want ErrNoTransaction", err)
	}
}
