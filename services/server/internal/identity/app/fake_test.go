package app_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/domain"
)

// fakeStore is an in-memory app.Store with the adapter's rules (unique handles, revocation
// kept once set, last use never moving backwards), counting calls so tests can tell a query
// happened; fail plants the error of a method's next call.
type fakeStore struct {
	mu         sync.Mutex
	principals map[uuid.UUID]identity.Principal
	devices    map[uuid.UUID]identity.Device
	tokens     map[uuid.UUID]storedToken
	calls      map[string]int
	touches    [][]app.TokenUse
	failNext   map[string]error
	touched    chan struct{} // receives after every TouchTokens, when not nil
}

type storedToken struct {
	domain.Token
	revokedAt  time.Time
	lastUsedAt time.Time
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		principals: map[uuid.UUID]identity.Principal{},
		devices:    map[uuid.UUID]identity.Device{},
		tokens:     map[uuid.UUID]storedToken{},
		calls:      map[string]int{},
		failNext:   map[string]error{},
	}
}

// call counts a call of method and returns the error the test planted for it, once.
func (f *fakeStore) call(method string) error {
	f.calls[method]++
	err := f.failNext[method]
	delete(f.failNext, method)
	return err
}

func (f *fakeStore) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakeStore) InsertPrincipal(_ context.Context, p identity.Principal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertPrincipal"); err != nil {
		return err
	}
	for _, o := range f.principals {
		if o.Handle == p.Handle {
			return identity.ErrHandleTaken
		}
	}
	p.Scopes = slices.Clone(p.Scopes)
	f.principals[p.ID] = p
	return nil
}

func (f *fakeStore) Principal(_ context.Context, id uuid.UUID) (identity.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Principal"); err != nil {
		return identity.Principal{}, err
	}
	p, ok := f.principals[id]
	if !ok {
		return identity.Principal{}, identity.ErrPrincipalNotFound
	}
	return p, nil
}

func (f *fakeStore) Refs(_ context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Refs"); err != nil {
		return nil, err
	}
	var out []identity.PrincipalRef
	for _, id := range ids {
		if p, ok := f.principals[id]; ok {
			out = append(out, p.Ref())
		}
	}
	return out, nil
}

func (f *fakeStore) ActiveByHandles(_ context.Context, handles []string) ([]identity.PrincipalRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ActiveByHandles"); err != nil {
		return nil, err
	}
	var out []identity.PrincipalRef
	for _, p := range f.principals {
		if slices.Contains(handles, p.Handle) && p.DeactivatedAt.IsZero() {
			out = append(out, p.Ref())
		}
	}
	return out, nil
}

func (f *fakeStore) InsertDevice(_ context.Context, d identity.Device) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertDevice"); err != nil {
		return err
	}
	f.devices[d.ID] = d
	return nil
}

func (f *fakeStore) Device(_ context.Context, id uuid.UUID) (identity.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Device"); err != nil {
		return identity.Device{}, err
	}
	d, ok := f.devices[id]
	if !ok {
		return identity.Device{}, identity.ErrDeviceNotFound
	}
	return d, nil
}

func (f *fakeStore) UpdateDevice(_ context.Context, id uuid.UUID, change func(*identity.Device) error) (identity.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("UpdateDevice"); err != nil {
		return identity.Device{}, err
	}
	d, ok := f.devices[id]
	if !ok {
		return identity.Device{}, identity.ErrDeviceNotFound
	}
	if err := change(&d); err != nil {
		return identity.Device{}, err
	}
	f.devices[id] = d
	return d, nil
}

func (f *fakeStore) InsertToken(_ context.Context, t domain.Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("InsertToken"); err != nil {
		return err
	}
	f.tokens[t.ID] = storedToken{Token: t}
	return nil
}

func (f *fakeStore) Credential(_ context.Context, hash domain.TokenHash) (domain.Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Credential"); err != nil {
		return domain.Credential{}, err
	}
	for _, t := range f.tokens {
		if t.Hash != hash {
			continue
		}
		p := f.principals[t.PrincipalID]
		c := domain.Credential{
			TokenID: t.ID, PrincipalID: p.ID, Kind: p.Kind, Scopes: slices.Clone(t.Scopes),
			ExpiresAt: t.ExpiresAt, RevokedAt: t.revokedAt, DeactivatedAt: p.DeactivatedAt, DeviceID: t.DeviceID,
		}
		if t.DeviceID != uuid.Nil {
			c.DeviceStatus = f.devices[t.DeviceID].Status
		}
		return c, nil
	}
	return domain.Credential{}, identity.ErrTokenNotFound
}

func (f *fakeStore) RevokeToken(_ context.Context, id uuid.UUID, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("RevokeToken"); err != nil {
		return err
	}
	t, ok := f.tokens[id]
	if !ok {
		return identity.ErrTokenNotFound
	}
	if t.revokedAt.IsZero() {
		t.revokedAt = at
	}
	f.tokens[id] = t
	return nil
}

func (f *fakeStore) TouchTokens(_ context.Context, uses []app.TokenUse) error {
	f.mu.Lock()
	err := f.call("TouchTokens")
	if err == nil {
		f.touches = append(f.touches, slices.Clone(uses))
		for _, u := range uses {
			if t, ok := f.tokens[u.TokenID]; ok && u.At.After(t.lastUsedAt) {
				t.lastUsedAt = u.At
				f.tokens[u.TokenID] = t
			}
		}
	}
	touched := f.touched
	f.mu.Unlock()
	if touched != nil {
		touched <- struct{}{}
	}
	return err
}

// fail plants err as the result of the next call of method.
func (f *fakeStore) fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext[method] = err
}

// token returns the stored token with id.
func (f *fakeStore) token(id uuid.UUID) storedToken {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens[id]
}

// deactivate marks a principal deactivated at at.
func (f *fakeStore) deactivate(id uuid.UUID, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.principals[id]
	p.DeactivatedAt = at
	f.principals[id] = p
}

// fakeTx runs fn directly, counting transactions; the fake store needs no real one.
type fakeTx struct {
	mu sync.Mutex
	n  int
}

func (f *fakeTx) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return fn(ctx)
}
