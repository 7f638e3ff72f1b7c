package app_test

import (
	"context"
	"slices"
	gosync "sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel/problem"
)

// fakeGrants is an in-memory app.GrantStore that counts the Scope reads.
type fakeGrants struct {
	mu     gosync.Mutex
	grants map[uuid.UUID]authz.Grant
	reads  int // OfPrincipal calls
}

func newFakeGrants(gs ...authz.Grant) *fakeGrants {
	f := &fakeGrants{grants: map[uuid.UUID]authz.Grant{}}
	for _, g := range gs {
		f.grants[g.ID] = g
	}
	return f
}

func (f *fakeGrants) remove(id uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.grants, id)
}

func (f *fakeGrants) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *fakeGrants) Insert(_ context.Context, g authz.Grant) (authz.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.grants {
		if o.PrincipalID == g.PrincipalID && o.ResourceKind == g.ResourceKind && o.ResourceID == g.ResourceID {
			return authz.Grant{}, problem.ErrConflict
		}
	}
	f.grants[g.ID] = g
	return g, nil
}

func (f *fakeGrants) Delete(_ context.Context, id uuid.UUID) (authz.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.grants[id]
	if !ok {
		return authz.Grant{}, problem.ErrNotFound
	}
	delete(f.grants, id)
	return g, nil
}

func (f *fakeGrants) Get(_ context.Context, id uuid.UUID) (authz.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.grants[id]
	if !ok {
		return authz.Grant{}, problem.ErrNotFound
	}
	return g, nil
}

func (f *fakeGrants) OfPrincipal(_ context.Context, principalID uuid.UUID) ([]authz.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var out []authz.Grant
	for _, g := range f.grants {
		if g.PrincipalID == principalID {
			out = append(out, g)
		}
	}
	return out, nil
}

func (f *fakeGrants) Page(_ context.Context, principalID, after uuid.UUID, limit int) ([]authz.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []authz.Grant
	for _, g := range f.grants {
		if (principalID == uuid.Nil || g.PrincipalID == principalID) && (after == uuid.Nil || slices.Compare(g.ID[:], after[:]) > 0) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b authz.Grant) int { return slices.Compare(a.ID[:], b.ID[:]) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (f *fakeGrants) LockOwners(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, g := range f.grants {
		if g.Role == authz.RoleOwner {
			n++
		}
	}
	return n, nil
}

// fakeVersions is an instance.Versions whose permission version the test sets.
type fakeVersions struct {
	mu      gosync.Mutex
	version int64
	reads   int
}

func (f *fakeVersions) bump() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
}

func (f *fakeVersions) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *fakeVersions) EventSeq(context.Context) (int64, error) { return 0, nil }

func (f *fakeVersions) PermissionVersion(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.version, nil
}

func (f *fakeVersions) SyncEpoch(context.Context) (uuid.UUID, error) { return uuid.Nil, nil }

// fakeDirectory is an in-memory app.ChannelDirectory: spaces, and channels with their space
// (uuid.Nil for a direct message).
type fakeDirectory struct {
	mu       gosync.Mutex
	spaces   map[uuid.UUID]bool
	channels map[uuid.UUID]uuid.UUID
	lookups  int
	// participants of the direct messages (the channels of no space)
	participants map[uuid.UUID]map[uuid.UUID]bool
}

func newFakeDirectory() *fakeDirectory {
	return &fakeDirectory{spaces: map[uuid.UUID]bool{}, channels: map[uuid.UUID]uuid.UUID{}, participants: map[uuid.UUID]map[uuid.UUID]bool{}}
}

func (f *fakeDirectory) addSpace(id uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spaces[id] = true
}

func (f *fakeDirectory) addChannel(id, space uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channels[id] = space
}

func (f *fakeDirectory) lookupCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

func (f *fakeDirectory) SpacesOfChannels(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	out := map[uuid.UUID]uuid.UUID{}
	for _, id := range ids {
		if sp, ok := f.channels[id]; ok && sp != uuid.Nil {
			out[id] = sp
		}
	}
	return out, nil
}

func (f *fakeDirectory) ChannelExists(_ context.Context, id uuid.UUID) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.channels[id]
	return ok, nil
}

// DirectParticipant: a channel of no space is a direct message whose participants are those
// of f.participants.
func (f *fakeDirectory) DirectParticipant(_ context.Context, channel, principal uuid.UUID) (direct, participant bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sp, ok := f.channels[channel]
	if !ok || sp != uuid.Nil {
		return false, false, nil
	}
	return true, f.participants[channel][principal], nil
}

func (f *fakeDirectory) SpaceExists(_ context.Context, id uuid.UUID) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spaces[id], nil
}
