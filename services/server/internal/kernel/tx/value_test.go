package tx_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"bothy.example.com/server/internal/kernel/tx"
)

type stagedKey struct{}

type otherKey struct{}

func TestValueIsPerTransaction(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	var inits atomic.Int32
	newList := func() any { inits.Add(1); return &[]string{} }
	list := func(ctx context.Context) *[]string {
		v, err := tx.Value(ctx, stagedKey{}, newList)
		if err != nil {
			t.Errorf("Value: %v", err)
			return &[]string{}
		}
		return v.(*[]string)
	}
	var first, nested, inHook, other any
	var leaked context.Context
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		leaked = ctx
		first = list(ctx)
		*list(ctx) = append(*list(ctx), "Alex")
		if err := r.RunInTx(ctx, func(ctx context.Context) error {
			nested = list(ctx)
			*list(ctx) = append(*list(ctx), "Sam")
			return nil
		}); err != nil {
			return err
		}
		var err error
		if other, err = tx.Value(ctx, otherKey{}, func() any { return "other" }); err != nil {
			return err
		}
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
			inHook = list(ctx)
			return nil
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if first != nested || first != inHook {
		t.Errorf("the value differs within one transaction: fn %p, nested %p, hook %p", first, nested, inHook)
	}
	if got := *first.(*[]string); !slices.Equal(got, []string{"Alex", "Sam"}) {
		t.Errorf("value = %v, want [Alex Sam]", got)
	}
	if other != "other" {
		t.Errorf("other key = %v, want its own value", other)
	}
	if got := inits.Load(); got != 1 {
		t.Errorf("init ran %d times in one transaction, want 1", got)
	}
	if _, err := tx.Value(leaked, stagedKey{}, newList); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("Value after the end = %v, want ErrNoTransaction", err)
	}
	if _, err := tx.Value(t.Context(), stagedKey{}, newList); !errors.Is(err, tx.ErrNoTransaction) {
		t.Errorf("Value outside = %v, want ErrNoTransaction", err)
	}
	// The next transaction gets a fresh value.
	var second any
	if err := r.RunInTx(t.Context(), func(ctx context.Context) error { second = list(ctx); return nil }); err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if second == first || len(*second.(*[]string)) != 0 {
		t.Errorf("a new transaction saw the old value %v", *second.(*[]string))
	}
}

func TestValueConcurrentCallsShareOneInit(t *testing.T) {
	t.Parallel()
	r, _ := setup(t)
	var inits atomic.Int32
	const goroutines = 8
	got := make([]any, goroutines)
	err := r.RunInTx(t.Context(), func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, goroutines)
		for i := range goroutines {
			wg.Go(func() {
				got[i], errs[i] = tx.Value(ctx, stagedKey{}, func() any { inits.Add(1); return new(int) })
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if n := inits.Load(); n != 1 {
		t.Errorf("init ran %d times, want 1", n)
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("goroutine %d got another value", i)
		}
	}
}
