package app_test

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
)

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

// denyIDs is a Rule of the shared fake authorizer: every resource but those in deny is
// allowed; those get their error.
func denyIDs(deny map[uuid.UUID]error) func(authorizetest.Call) error {
	return func(c authorizetest.Call) error { return deny[c.Res.ID] }
}
