package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	gosync "sync"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// syncBuffer is a log sink safe for the parallel goroutines of one test.
type syncBuffer struct {
	mu  gosync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// world is one Authorizer over fakes.
type world struct {
	grants   *fakeGrants
	versions *fakeVersions
	dir      *fakeDirectory
	logs     *syncBuffer
	reg      *prometheus.Registry
	floor    *app.VersionFloor
	auth     *app.Authorizer
}

func newWorld(t *testing.T, cacheSize int, grants ...authz.Grant) *world {
	t.Helper()
	w := &world{
		grants: newFakeGrants(grants...), versions: &fakeVersions{}, dir: newFakeDirectory(),
		logs: &syncBuffer{}, reg: prometheus.NewRegistry(), floor: &app.VersionFloor{},
	}
	auth, err := app.NewAuthorizer(app.AuthorizerDeps{
		Grants: w.grants, Versions: w.versions, Directory: w.dir, CacheSize: cacheSize,
		Logger: slog.New(slog.NewJSONHandler(w.logs, nil)), Registerer: w.reg, Floor: w.floor,
	})
	if err != nil {
		t.Fatalf("NewAuthorizer: %v", err)
	}
	w.auth = auth
	return w
}

func grantOf(p uuid.UUID, kind kernel.ResourceKind, id uuid.UUID, role authz.Role) authz.Grant {
	return authz.Grant{ID: uuid.Must(uuid.NewV7()), PrincipalID: p, ResourceKind: kind, ResourceID: id, Role: role}
}

func as(p uuid.UUID) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: p, Kind: actor.KindPerson})
}

// denials reads the denial counter of (action, reason) from the registry; 0 when absent.
func (w *world) denials(t *testing.T, action kernel.Action, reason string) float64 {
	t.Helper()
	mfs, err := w.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != app.DenialsMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["action"] == string(action) && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

var (
	alex   = uuid.MustParse("0190a6b2-0000-7000-8000-00000000a1e0")
	sam    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000005a0")
	robin  = uuid.MustParse("0190a6b2-0000-7000-8000-00000000b0b0")
	instID = uuid.MustParse("0190a6b2-0000-7000-8000-000000000001")
)

func TestNewAuthorizerRefusesIncompleteDeps(t *testing.T) {
	t.Parallel()
	_, err := app.NewAuthorizer(app.AuthorizerDeps{})
	if err == nil {
		t.Fatal("NewAuthorizer(no deps) = nil error")
	}
	for _, want := range []string{"grant store", "versions", "directory", "cache size", "logger", "registerer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestScopeIsCachedWhileTheVersionHolds(t *testing.T) {
	t.Parallel()
	space := uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceSpace, space, authz.RoleViewer))
	ctx := context.Background()
	for range 3 {
		s, err := w.auth.Scope(ctx, sam)
		if err != nil {
			t.Fatalf("Scope: %v", err)
		}
		if got := s.FullyVisibleSpaceIDs(); len(got) != 1 || got[0] != space {
			t.Fatalf("fully visible spaces = %v, want [%s]", got, space)
		}
	}
	if got := w.grants.readCount(); got != 1 {
		t.Fatalf("grant reads = %d, want 1 (cached)", got)
	}
	w.versions.bump()
	s, err := w.auth.Scope(ctx, sam)
	if err != nil {
		t.Fatalf("Scope: %v", err)
	}
	if got := w.grants.readCount(); got != 2 || s.PermissionVersion() != 1 {
		t.Fatalf("after a version change: reads %d, version %d; want 2 and 1", got, s.PermissionVersion())
	}
}

// TestKnownPermissionVersionStandsForTheRead: with a permission_version the caller read
// (authz.WithPermissionVersion), Scope reads no version: a cached Scope of that version is
// returned as it is, another version builds the Scope from the grants and tags it with the
// known version; without one, the version is read as before.
func TestKnownPermissionVersionStandsForTheRead(t *testing.T) {
	t.Parallel()
	space := uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceSpace, space, authz.RoleViewer))
	ctx := context.Background()
	if _, err := w.auth.Scope(ctx, sam); err != nil { // caches the Scope of version 0
		t.Fatalf("Scope: %v", err)
	}
	readsBefore := w.versions.readCount()
	s, err := w.auth.Scope(authz.WithPermissionVersion(ctx, 0), sam)
	if err != nil || s.PermissionVersion() != 0 {
		t.Fatalf("Scope at the cached version = %v, %v", s.PermissionVersion(), err)
	}
	if got := w.grants.readCount(); got != 1 {
		t.Errorf("grant reads = %d, want 1 (the cached Scope)", got)
	}
	s, err = w.auth.Scope(authz.WithPermissionVersion(ctx, 7), sam)
	if err != nil || s.PermissionVersion() != 7 {
		t.Fatalf("Scope at a newer known version = %v, %v; want version 7", s.PermissionVersion(), err)
	}
	if got := w.grants.readCount(); got != 2 {
		t.Errorf("grant reads = %d, want 2 (a new Scope for the newer version)", got)
	}
	if got := w.versions.readCount(); got != readsBefore {
		t.Errorf("permission_version read %d more times with a known version, want none", got-readsBefore)
	}
	if _, err := w.auth.Scope(ctx, sam); err != nil {
		t.Fatalf("Scope: %v", err)
	}
	if got := w.versions.readCount(); got != readsBefore+1 {
		t.Errorf("permission_version reads without a known version = %d, want 1", got-readsBefore)
	}
}

// TestTheFloorOverridesAnOlderKnownVersion: a known permission_version older than the
// process's floor (a grant change the same request committed since) gives way to the floor: the
// Scope is built anew from the grants and tagged with it; a floor at or below the known
// version changes nothing, and a floor never falls.
func TestTheFloorOverridesAnOlderKnownVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceSpace, uuid.New(), authz.RoleViewer))
	known := authz.WithPermissionVersion(context.Background(), 2)
	if s, err := w.auth.Scope(known, sam); err != nil || s.PermissionVersion() != 2 {
		t.Fatalf("Scope at version 2 = %v, %v", s.PermissionVersion(), err)
	}
	w.floor.Raise(1)
	if s, err := w.auth.Scope(known, sam); err != nil || s.PermissionVersion() != 2 || w.grants.readCount() != 1 {
		t.Fatalf("Scope under a lower floor = version %d, %v, %d grant reads; want the cached version 2", s.PermissionVersion(), err, w.grants.readCount())
	}
	w.floor.Raise(5)
	w.floor.Raise(3)
	if got := w.floor.Load(); got != 5 {
		t.Fatalf("floor = %d after raising to 5 then 3, want 5", got)
	}
	if s, err := w.auth.Scope(known, sam); err != nil || s.PermissionVersion() != 5 || w.grants.readCount() != 2 {
		t.Fatalf("Scope under a higher floor = version %d, %v, %d grant reads; want a new Scope of version 5", s.PermissionVersion(), err, w.grants.readCount())
	}
	var none *app.VersionFloor
	none.Raise(9)
	if none.Load() != 0 {
		t.Fatal("a nil floor is not 0")
	}
}

// TestNewChannelInFullyVisibleSpaceNeedsNoNewScope: creating a channel does not advance the
// permission version, and a channel in a space the actor holds a grant on is visible at once,
// whether the caller names its space or not.
func TestNewChannelInFullyVisibleSpaceNeedsNoNewScope(t *testing.T) {
	t.Parallel()
	space, other := uuid.New(), uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceSpace, space, authz.RoleMember))
	ctx := as(sam)
	if _, err := w.auth.Scope(ctx, sam); err != nil {
		t.Fatalf("Scope: %v", err)
	}
	created := uuid.New()
	w.dir.addChannel(created, space)
	elsewhere := uuid.New()
	w.dir.addChannel(elsewhere, other)
	tests := []struct {
		name   string
		action kernel.Action
		res    authorize.Resource
		want   error
	}{
		{"named with its space", kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: created, SpaceID: space}, nil},
		{"space looked up", kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: created}, nil},
		{"thread in it", kernel.ActionMessageCreate, authorize.Resource{Kind: kernel.ResourceThread, ID: uuid.New(), ChannelID: created}, nil},
		{"channel in another space", kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: elsewhere}, problem.ErrNotFound},
	}
	for _, tc := range tests {
		if err := w.auth.Authorize(ctx, tc.action, tc.res); !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
			t.Errorf("%s: Authorize = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := w.grants.readCount(); got != 1 {
		t.Fatalf("grant reads = %d, want 1: a new channel must not invalidate the Scope", got)
	}
}

func TestSpaceLookupOnlyWhenItCanMatter(t *testing.T) {
	t.Parallel()
	channel := uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceChannel, channel, authz.RoleMember))
	w.dir.addChannel(channel, uuid.New())
	ctx := as(sam)
	if _, err := w.auth.Scope(ctx, sam); err != nil {
		t.Fatalf("Scope: %v", err)
	}
	before := w.dir.lookupCount()
	if err := w.auth.Authorize(ctx, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}); err != nil {
		t.Fatalf("Authorize granted channel: %v", err)
	}
	if err := w.auth.Authorize(ctx, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: uuid.New()}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Authorize other channel = %v, want not found", err)
	}
	if got := w.dir.lookupCount() - before; got != 0 {
		t.Fatalf("directory lookups = %d, want 0 (no space grant, so no space can matter)", got)
	}
}

func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	ctx := context.Background()
	for _, p := range []uuid.UUID{alex, sam, alex, robin} { // robin evicts sam, alex was used last
		if _, err := w.auth.Scope(ctx, p); err != nil {
			t.Fatalf("Scope: %v", err)
		}
	}
	if got := w.grants.readCount(); got != 3 {
		t.Fatalf("reads = %d, want 3", got)
	}
	if _, err := w.auth.Scope(ctx, alex); err != nil {
		t.Fatalf("Scope: %v", err)
	}
	if got := w.grants.readCount(); got != 3 {
		t.Fatalf("alex must still be cached: reads = %d, want 3", got)
	}
	if _, err := w.auth.Scope(ctx, sam); err != nil {
		t.Fatalf("Scope: %v", err)
	}
	if got := w.grants.readCount(); got != 4 {
		t.Fatalf("sam must have been evicted: reads = %d, want 4", got)
	}
}

func TestDenialsAreAuditedOutsideFilterMode(t *testing.T) {
	t.Parallel()
	channel := uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceChannel, channel, authz.RoleViewer))
	ctx := as(sam)
	res := authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}

	if err := w.auth.Authorize(ctx, kernel.ActionChannelUpdate, res); !errors.Is(err, problem.ErrForbidden) {
		t.Fatalf("Authorize(channel.update) = %v, want forbidden", err)
	}
	if err := w.auth.Authorize(authorize.Filter(ctx), kernel.ActionChannelUpdate, res); !errors.Is(err, problem.ErrForbidden) {
		t.Fatalf("Authorize in filter mode = %v, want forbidden", err)
	}
	if err := w.auth.Authorize(ctx, kernel.ActionChannelRead, res); err != nil {
		t.Fatalf("Authorize(channel.read) = %v, want allowed", err)
	}
	if err := w.auth.Authorize(context.Background(), kernel.ActionInstanceRead, authorize.Instance()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Authorize without actor = %v, want unauthenticated", err)
	}

	lines := w.logs.lines(t)
	if len(lines) != 2 {
		t.Fatalf("log lines = %v, want one per audited denial (2)", lines)
	}
	first := lines[0]
	want := map[string]any{
		"msg": "authorization denied", "action": "channel.update", "resource_kind": "channel",
		"resource_id": channel.String(), "actor_id": sam.String(), "actor_kind": "person", "decision": "forbidden",
	}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("log %s = %v, want %v (line %v)", k, first[k], v, first)
		}
	}
	if lines[1]["decision"] != "unauthenticated" || lines[1]["actor_id"] != nil {
		t.Errorf("unauthenticated line = %v", lines[1])
	}
	if got := w.denials(t, kernel.ActionChannelUpdate, "forbidden"); got != 1 {
		t.Errorf("denials{channel.update,forbidden} = %v, want 1 (filter mode not counted)", got)
	}
	if got := w.denials(t, kernel.ActionInstanceRead, "unauthenticated"); got != 1 {
		t.Errorf("denials{instance.read,unauthenticated} = %v, want 1", got)
	}
}

func TestPendingDeviceIsRefusedEverything(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 10, grantOf(alex, kernel.ResourceInstance, instID, authz.RoleOwner))
	ctx := actor.With(context.Background(), actor.Actor{PrincipalID: alex, Kind: actor.KindPerson, DevicePending: true})
	for _, a := range kernel.Actions() {
		if err := w.auth.Authorize(ctx, a, authorize.Instance()); !errors.Is(err, problem.ErrDevicePending) {
			t.Fatalf("Authorize(%s) = %v, want device pending", a, err)
		}
	}
	if got := w.grants.readCount(); got != 0 {
		t.Errorf("grant reads = %d, want 0: a pending device is refused before any read", got)
	}
	if got := w.denials(t, kernel.ActionInstanceRead, "device_pending"); got != 1 {
		t.Errorf("denials{instance.read,device_pending} = %v, want 1", got)
	}
}

func TestForActorDecidesWithOneScope(t *testing.T) {
	t.Parallel()
	channel := uuid.New()
	w := newWorld(t, 10, grantOf(sam, kernel.ResourceChannel, channel, authz.RoleViewer))
	ctx := as(sam)
	dec, err := w.auth.ForActor(ctx)
	if err != nil {
		t.Fatalf("ForActor: %v", err)
	}
	versionReads := w.versions.readCount()
	for range 100 {
		if err := dec.Authorize(ctx, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}); err != nil {
			t.Fatalf("decider: %v", err)
		}
	}
	if got := w.versions.readCount() - versionReads; got != 0 {
		t.Fatalf("version reads during decisions = %d, want 0", got)
	}
	if got := dec.Scope().VisibleChannelIDs(); len(got) != 1 || got[0] != channel {
		t.Fatalf("decider scope channels = %v", got)
	}
	if _, err := w.auth.ForActor(context.Background()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("ForActor without actor = %v, want unauthenticated", err)
	}
}

func TestDeciderLevel(t *testing.T) {
	t.Parallel()
	space, channel, other, dm := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	w := newWorld(t, 10,
		grantOf(sam, kernel.ResourceInstance, instID, authz.RoleViewer),
		grantOf(sam, kernel.ResourceSpace, space, authz.RoleMember),
		grantOf(sam, kernel.ResourceChannel, channel, authz.RoleAdmin),
		grantOf(robin, kernel.ResourceChannel, other, authz.RoleMember),
		grantOf(alex, kernel.ResourceInstance, instID, authz.RoleOwner),
	)
	tests := []struct {
		name string
		who  uuid.UUID
		res  authorize.Resource
		want authz.Role
	}{
		{"instance", sam, authorize.Instance(), authz.RoleViewer},
		{"space grant above the instance's", sam, authorize.Resource{Kind: kernel.ResourceSpace, ID: space, SpaceID: space}, authz.RoleMember},
		{"another space: the instance's", sam, authorize.Resource{Kind: kernel.ResourceSpace, ID: uuid.New()}, authz.RoleViewer},
		{"channel grant", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel, ChannelID: channel, SpaceID: space}, authz.RoleAdmin},
		{"thread in a channel of the space", sam, authorize.Resource{Kind: kernel.ResourceThread, ID: uuid.New(), ChannelID: uuid.New(), SpaceID: space}, authz.RoleMember},
		{"direct message without grant", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: dm, ChannelID: dm}, authz.RoleViewer},
		{"owner", alex, authorize.Resource{Kind: kernel.ResourceChannel, ID: dm, ChannelID: dm}, authz.RoleOwner},
		{"space seen through a channel only", robin, authorize.Resource{Kind: kernel.ResourceSpace, ID: space, SpaceID: space}, ""},
		{"nothing", robin, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel, SpaceID: space}, ""},
	}
	for _, tc := range tests {
		dec, err := w.auth.ForActor(as(tc.who))
		if err != nil {
			t.Fatalf("ForActor: %v", err)
		}
		if got := dec.Level(tc.res); got != tc.want {
			t.Errorf("%s: Level = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMayRead(t *testing.T) {
	t.Parallel()
	space, inSpace, channel, dm := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	w := newWorld(t, 10,
		grantOf(sam, kernel.ResourceSpace, space, authz.RoleViewer),
		grantOf(robin, kernel.ResourceChannel, channel, authz.RoleMember),
		grantOf(robin, kernel.ResourceChannel, dm, authz.RoleMember),
	)
	w.dir.addChannel(inSpace, space)
	w.dir.addChannel(channel, uuid.New())
	w.dir.addChannel(dm, uuid.Nil)
	// The asking actor is an app without scopes whose device is pending: none of that is the
	// mentioned principal's.
	ctx := actor.With(context.Background(), actor.Actor{PrincipalID: alex, Kind: actor.KindApp, DevicePending: true})
	tests := []struct {
		name string
		who  uuid.UUID
		res  authorize.Resource
		want bool
	}{
		{"channel of a granted space, space named", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: inSpace, SpaceID: space}, true},
		{"channel of a granted space, space looked up", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: inSpace}, true},
		{"thread of it", sam, authorize.Resource{Kind: kernel.ResourceThread, ID: uuid.New(), ChannelID: inSpace}, true},
		{"another channel", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}, false},
		{"granted channel", robin, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}, true},
		{"direct message", robin, authorize.Resource{Kind: kernel.ResourceChannel, ID: dm, ChannelID: dm}, true},
		{"direct message of others", sam, authorize.Resource{Kind: kernel.ResourceChannel, ID: dm, ChannelID: dm}, false},
		{"the instance", alex, authorize.Instance(), true},
	}
	for _, tc := range tests {
		got, err := w.auth.MayRead(ctx, tc.who, tc.res)
		if err != nil {
			t.Fatalf("%s: MayRead: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: MayRead = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := w.denials(t, kernel.ActionChannelRead, "not_found"); got != 0 {
		t.Errorf("MayRead audited %v denials, want none", got)
	}
	if got := w.logs.lines(t); len(got) != 0 {
		t.Errorf("MayRead logged %v, want nothing", got)
	}
}

func TestRevokedGrantTakesEffectWithTheNextVersion(t *testing.T) {
	t.Parallel()
	channel := uuid.New()
	g := grantOf(sam, kernel.ResourceChannel, channel, authz.RoleMember)
	w := newWorld(t, 10, g)
	ctx := as(sam)
	res := authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}
	if err := w.auth.Authorize(ctx, kernel.ActionChannelRead, res); err != nil {
		t.Fatalf("before revoke: %v", err)
	}
	w.grants.remove(g.ID)
	w.versions.bump()
	if err := w.auth.Authorize(ctx, kernel.ActionChannelRead, res); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("after revoke = %v, want not found", err)
	}
}
