package app_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel"
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

func (f *fakeStore) ActiveRefs(_ context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ActiveRefs"); err != nil {
		return nil, err
	}
	var out []identity.PrincipalRef
	for _, id := range ids {
		if p, ok := f.principals[id]; ok && p.DeactivatedAt.IsZero() {
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

func (f *fakeStore) CredentialsByID(_ context.Context, ids []uuid.UUID) ([]domain.Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("CredentialsByID"); err != nil {
		return nil, err
	}
	var out []domain.Credential
	for _, id := range ids {
		t, ok := f.tokens[id]
		if !ok {
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
		out = append(out, c)
	}
	return out, nil
}

func (f *fakeStore) RevokeToken(_ context.Context, id uuid.UUID, at time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("RevokeToken"); err != nil {
		return false, err
	}
	t, ok := f.tokens[id]
	if !ok {
		return false, identity.ErrTokenNotFound
	}
	if !t.revokedAt.IsZero() {
		return false, nil
	}
	t.revokedAt = at
	f.tokens[id] = t
	return true, nil
}

func (f *fakeStore) info(t storedToken) identity.TokenInfo {
	info := identity.TokenInfo{
		ID: t.ID, PrincipalID: t.PrincipalID, DeviceID: t.DeviceID, Scopes: slices.Clone(t.Scopes),
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RevokedAt: t.revokedAt, LastUsedAt: t.lastUsedAt,
	}
	if d, ok := f.devices[t.DeviceID]; ok {
		info.DeviceName, info.DeviceStatus = d.Name, d.Status
	}
	return info
}

func (f *fakeStore) TokenInfo(_ context.Context, id uuid.UUID) (identity.TokenInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("TokenInfo"); err != nil {
		return identity.TokenInfo{}, err
	}
	t, ok := f.tokens[id]
	if !ok {
		return identity.TokenInfo{}, identity.ErrTokenNotFound
	}
	return f.info(t), nil
}

func (f *fakeStore) Tokens(_ context.Context, principalID, after uuid.UUID, limit int) ([]identity.TokenInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Tokens"); err != nil {
		return nil, err
	}
	var out []identity.TokenInfo
	for _, t := range f.tokens {
		if t.PrincipalID == principalID && bytes.Compare(t.ID[:], after[:]) > 0 {
			out = append(out, f.info(t))
		}
	}
	slices.SortFunc(out, func(a, b identity.TokenInfo) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (f *fakeStore) LockPrincipals(_ context.Context, ids []uuid.UUID) ([]identity.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("LockPrincipals"); err != nil {
		return nil, err
	}
	var out []identity.Principal
	for _, id := range ids {
		if p, ok := f.principals[id]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *fakeStore) SetDeactivatedAt(_ context.Context, id uuid.UUID, at time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("SetDeactivatedAt"); err != nil {
		return false, err
	}
	p, ok := f.principals[id]
	if !ok {
		return false, identity.ErrPrincipalNotFound
	}
	if p.DeactivatedAt.IsZero() == at.IsZero() {
		return false, nil
	}
	p.DeactivatedAt = at
	f.principals[id] = p
	return true, nil
}

// fakeAppender records the events appended.
type fakeAppender struct {
	mu     sync.Mutex
	events []kernel.Event
}

func (a *fakeAppender) Append(_ context.Context, events ...kernel.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, events...)
	return nil
}

func (a *fakeAppender) appended() []kernel.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

// fakeOwners names the instance's owners.
type fakeOwners struct{ ids []uuid.UUID }

func (o *fakeOwners) InstanceOwners(context.Context) ([]uuid.UUID, error) { return o.ids, nil }

// fakeInstance names the instance.
type fakeInstance struct{ id uuid.UUID }

func (i fakeInstance) InstanceID(context.Context) (uuid.UUID, error) { return i.id, nil }

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
