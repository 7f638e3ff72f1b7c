package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/ids"
)

// directTx runs fn without a transaction, for use cases over fakes.
type directTx struct{}

func (directTx) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return fn(ctx)
}

// brokenStore is a FlagStore whose every method fails with err, except where a field says
// otherwise, to check that the use cases report failures instead of half-doing a change.
type brokenStore struct {
	err     error
	changed bool // PutFlag, PutOverride, DeleteOverride and DeleteFlag succeed with this result
	infoErr error
	touch   error
}

func (s brokenStore) Info(context.Context) (instance.Info, error) {
	return instance.Info{ID: ids.New()}, s.infoErr
}

func (s brokenStore) FlagsFor(context.Context, actor.Kind, uuid.UUID) ([]app.FlagForActor, error) {
	return nil, s.err
}
func (s brokenStore) ListFlags(context.Context) ([]instance.Flag, error) { return nil, s.err }
func (s brokenStore) GetFlag(context.Context, string) (instance.Flag, error) {
	return instance.Flag{}, s.err
}
func (s brokenStore) LockFlag(context.Context, string) error { return nil }
func (s brokenStore) PutFlag(context.Context, string, string, bool) (bool, error) {
	return s.changed, nil
}
func (s brokenStore) DeleteFlag(context.Context, string) (bool, error) { return s.changed, nil }
func (s brokenStore) PutOverride(context.Context, string, instance.FlagTarget, bool) (bool, error) {
	return s.changed, nil
}

func (s brokenStore) DeleteOverride(context.Context, string, instance.FlagTarget) (bool, error) {
	return s.changed, nil
}
func (s brokenStore) TouchFlag(context.Context, string) error { return s.touch }

// failingAppender refuses every event.
type failingAppender struct{ err error }

func (a failingAppender) Append(context.Context, ...kernel.Event) error { return a.err }

func TestFlagFailuresAreReported(t *testing.T) {
	t.Parallel()
	errStore, errAppend := errors.New("store down"), errors.New("append refused")
	target := instance.KindTarget(actor.KindAgent)
	tests := []struct {
		name  string
		store brokenStore
		app   error
		run   func(ctx context.Context, f *app.Flags) error
		want  error
	}{
		{name: "evaluate", store: brokenStore{err: errStore}, want: errStore, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.Evaluate(ctx, actor.Actor{PrincipalID: ids.New(), Kind: actor.KindPerson})
			return err
		}},
		{name: "list", store: brokenStore{err: errStore}, want: errStore, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.List(ctx)
			return err
		}},
		{name: "define, reading back", store: brokenStore{err: errStore}, want: errStore, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.Define(ctx, "threads.summaries", "", true)
			return err
		}},
		{name: "define, appending", store: brokenStore{changed: true}, app: errAppend, want: errAppend, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.Define(ctx, "threads.summaries", "", true)
			return err
		}},
		{name: "override, touching", store: brokenStore{changed: true, touch: errStore}, want: errStore, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.SetOverride(ctx, "threads.summaries", target, true)
			return err
		}},
		{name: "override, appending", store: brokenStore{changed: true}, app: errAppend, want: errAppend, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.SetOverride(ctx, "threads.summaries", target, true)
			return err
		}},
		{name: "override, reading the instance", store: brokenStore{changed: true, infoErr: errStore}, want: errStore, run: func(ctx context.Context, f *app.Flags) error {
			_, err := f.ClearOverride(ctx, "threads.summaries", target)
			return err
		}},
		{name: "delete, appending", store: brokenStore{changed: true}, app: errAppend, want: errAppend, run: func(ctx context.Context, f *app.Flags) error {
			return f.Delete(ctx, "threads.summaries")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := app.NewFlags(directTx{}, tc.store, failingAppender{err: tc.app})
			if err := tc.run(t.Context(), f); !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
		})
	}
}
