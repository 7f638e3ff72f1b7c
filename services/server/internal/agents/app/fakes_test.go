package app_test

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// fakeAuthorizer allows every agent but those in deny, which get their error; it records
// every call and whether it came in filter mode.
type fakeAuthorizer struct {
	deny map[uuid.UUID]error

	mu    sync.Mutex
	calls []authzCall
}

type authzCall struct {
	action kernel.Action
	res    authorize.Resource
	filter bool
}

func (f *fakeAuthorizer) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, authzCall{action: action, res: res, filter: authorize.IsFilter(ctx)})
	return f.deny[res.ID]
}

func (f *fakeAuthorizer) seen() []authzCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]authzCall(nil), f.calls...)
}

// failingStore wraps a Store and fails the methods whose error is set.
type failingStore struct {
	app.Store
	insertErr, listErr error
}

func (s failingStore) InsertProfile(ctx context.Context, p domain.Profile) error {
	if s.insertErr != nil {
		return s.insertErr
	}
	return s.Store.InsertProfile(ctx, p)
}

func (s failingStore) ActiveProfiles(ctx context.Context) ([]domain.Profile, error) {
	if s.listErr != nil {
		return nil, s.listErr
	}
	return s.Store.ActiveProfiles(ctx)
}

// failingAppender refuses every event.
type failingAppender struct{ err error }

func (a failingAppender) Append(context.Context, ...kernel.Event) error { return a.err }
