package httpapi_test

import (
	"context"
	gosync "sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
)

// fakeGrants records the use-case calls and answers with canned results.
type fakeGrants struct {
	mu      gosync.Mutex
	calls   []string
	created authz.GrantInput
	revoked uuid.UUID
	listed  [3]any // principal, after, limit
	err     error
	grant   authz.Grant
	page    app.GrantPage
}

func (f *fakeGrants) record(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
}

func (f *fakeGrants) CreateGrant(_ context.Context, in authz.GrantInput) (authz.Grant, error) {
	f.record("CreateGrant")
	f.created = in
	return f.grant, f.err
}

func (f *fakeGrants) RevokeGrant(_ context.Context, id uuid.UUID) error {
	f.record("RevokeGrant")
	f.revoked = id
	return f.err
}

func (f *fakeGrants) ListGrants(_ context.Context, principal, after uuid.UUID, limit int) (app.GrantPage, error) {
	f.record("ListGrants")
	f.listed = [3]any{principal, after, limit}
	return f.page, f.err
}
