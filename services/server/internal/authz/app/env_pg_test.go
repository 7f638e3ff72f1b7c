package app_test

import (
	"context"
	"log/slog"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/authz"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/identity"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
)

// env is one test's migrated database with the authz module wired over real adapters
// (instance counters, the sync appender, identity) and a directory the test fills.
type env struct {
	pool      *pgxpool.Pool
	runner    *tx.Runner
	store     *authzpg.Store
	instance  *instancepg.Store
	info      instance.Info
	reader    *syncpg.Reader
	identity  *identityapp.Service
	directory *directory
	auth      *app.Authorizer
	floor     *app.VersionFloor
	grants    *app.Grants
	boot      *app.Bootstrapper
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return envOn(t, pgtest.New(t))
}

func envOn(t *testing.T, pool *pgxpool.Pool) *env {
	t.Helper()
	runner := tx.NewRunner(pool)
	e := &env{
		pool: pool, runner: runner, store: authzpg.New(runner), instance: instancepg.New(runner),
		reader: syncpg.NewReader(runner), directory: newDirectory(), floor: &app.VersionFloor{},
	}
	info, err := e.instance.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("instance: %v", err)
	}
	e.info = info
	e.identity, err = identityapp.New(identityapp.Deps{
		Store: identitypg.New(runner), Tx: runner, Clock: clock.System(), Logger: slog.New(slog.DiscardHandler),
		Config:   identityapp.Config{TokenTTL: time.Hour, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: identityPorts{}, Owners: identityPorts{}, Instance: identityPorts{},
	})
	if err != nil {
		t.Fatalf("identity: %v", err)
	}
	e.auth, err = app.NewAuthorizer(app.AuthorizerDeps{
		Grants: e.store, Versions: e.instance, Directory: e.directory, CacheSize: 100,
		Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry(), Floor: e.floor,
	})
	if err != nil {
		t.Fatalf("authorizer: %v", err)
	}
	appender, err := syncpg.NewAppender(runner, e.instance, syncpg.AppendConfig{Concurrency: 4})
	if err != nil {
		t.Fatalf("appender: %v", err)
	}
	e.grants, err = app.NewGrants(app.GrantsDeps{
		Runner: runner, Store: e.store, Counters: e.instance, Appender: appender,
		Instance: e.instance, Directory: e.directory, Principals: e.identity, Authorizer: e.auth, PageSize: 3,
		Floor: e.floor,
	})
	if err != nil {
		t.Fatalf("grants: %v", err)
	}
	e.boot, err = app.NewBootstrapper(app.BootstrapDeps{
		Runner: runner, Store: e.store, Grants: e.grants, Principals: e.identity, Tokens: e.identity.Tokens(),
	})
	if err != nil {
		t.Fatalf("bootstrapper: %v", err)
	}
	return e
}

// person creates a person with the handle and returns its id.
func (e *env) person(t *testing.T, handle string) uuid.UUID {
	t.Helper()
	p, err := e.identity.CreatePerson(t.Context(), identity.PersonInput{DisplayName: handle, Handle: handle, Email: handle + "@example.com"})
	if err != nil {
		t.Fatalf("create person %s: %v", handle, err)
	}
	return p.ID
}

// as returns a context acting as the person.
func asPerson(ctx context.Context, p uuid.UUID) context.Context {
	return actor.With(ctx, actor.Actor{PrincipalID: p, Kind: actor.KindPerson})
}

// grant makes a grant through the unauthorized port, acting as by, and fails the test on error.
func (e *env) grant(t *testing.T, by, p uuid.UUID, kind kernel.ResourceKind, id uuid.UUID, role authz.Role) authz.Grant {
	t.Helper()
	g, err := e.grants.Grant(asPerson(t.Context(), by), authz.GrantInput{PrincipalID: p, ResourceKind: kind, ResourceID: id, Role: role})
	if err != nil {
		t.Fatalf("grant %s %s on %s %s: %v", p, role, kind, id, err)
	}
	return g
}

func (e *env) permissionVersion(t *testing.T) int64 {
	t.Helper()
	v, err := e.instance.PermissionVersion(t.Context())
	if err != nil {
		t.Fatalf("permission version: %v", err)
	}
	return v
}

// eventsAfter returns the log's events after seq.
func (e *env) eventsAfter(t *testing.T, seq int64) []domain.StoredEvent {
	t.Helper()
	evs, err := e.reader.EventsAfter(t.Context(), seq, 10_000)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return evs
}

func (e *env) head(t *testing.T) int64 {
	t.Helper()
	h, err := e.instance.EventSeq(t.Context())
	if err != nil {
		t.Fatalf("event seq: %v", err)
	}
	return h
}

// directory is a hand-written app.ChannelDirectory the tests fill: spaces, and channels with
// their space (uuid.Nil for a direct message).
type directory struct {
	mu       gosync.Mutex
	spaces   map[uuid.UUID]bool
	channels map[uuid.UUID]uuid.UUID
	// participants of the direct messages (the channels of no space)
	participants map[uuid.UUID]map[uuid.UUID]bool
}

func newDirectory() *directory {
	return &directory{spaces: map[uuid.UUID]bool{}, channels: map[uuid.UUID]uuid.UUID{}, participants: map[uuid.UUID]map[uuid.UUID]bool{}}
}

func (d *directory) space() uuid.UUID {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := uuid.Must(uuid.NewV7())
	d.spaces[id] = true
	return id
}

func (d *directory) channel(space uuid.UUID) uuid.UUID {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := uuid.Must(uuid.NewV7())
	d.channels[id] = space
	return id
}

// direct adds a direct message of the participants (a channel of no space).
func (d *directory) direct(participants ...uuid.UUID) uuid.UUID {
	id := d.channel(uuid.Nil)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.participants[id] = map[uuid.UUID]bool{}
	for _, p := range participants {
		d.participants[id][p] = true
	}
	return id
}

// drop forgets a channel, as if chat had deleted it.
func (d *directory) drop(channel uuid.UUID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.channels, channel)
}

func (d *directory) SpacesOfChannels(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[uuid.UUID]uuid.UUID{}
	for _, id := range ids {
		if sp := d.channels[id]; sp != uuid.Nil {
			out[id] = sp
		}
	}
	return out, nil
}

func (d *directory) ChannelExists(_ context.Context, id uuid.UUID) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.channels[id]
	return ok, nil
}

// DirectParticipant: a channel of no space is a direct message whose participants are those
// of d.participants.
func (d *directory) DirectParticipant(_ context.Context, channel, principal uuid.UUID) (direct, participant bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sp, ok := d.channels[channel]
	if !ok || sp != uuid.Nil {
		return false, false, nil
	}
	return true, d.participants[channel][principal], nil
}

func (d *directory) SpaceExists(_ context.Context, id uuid.UUID) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.spaces[id], nil
}

// identityPorts are identity's event ports for a test that does not look at identity's
// events: the appender drops them, no principal owns the instance, the instance is one id.
type identityPorts struct{}

func (identityPorts) Append(context.Context, ...kernel.Event) error { return nil }

func (identityPorts) InstanceOwners(context.Context) ([]uuid.UUID, error) { return nil, nil }

func (identityPorts) InstanceID(context.Context) (uuid.UUID, error) {
	return uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa"), nil
}
