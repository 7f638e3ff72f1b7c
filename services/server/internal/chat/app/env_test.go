package app_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	start = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	errDB = errors.New("database on fire")

	alex  = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000001")
	sam   = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000002")
	robin = uuid.MustParse("01938d2a-7c00-7a01-8000-000000000003")
)

// testConfig is the configuration of the unit tests: small limits, so tests reach them.
var testConfig = app.Config{MaxMessageBytes: 64, MessagesPageSize: 3, MaxDMParticipants: 3, MaxReactionsPerMessage: 2, SearchPageSize: 3, SearchQueryMaxChars: 50, SearchExcerptWords: 10, MembersPageSize: 2}

// env is a Service over fakes.
type env struct {
	store    *fakeStore
	tx       *fakeTx
	appender *fakeAppender
	redactor *fakeRedactor
	authz    *fakeAuthorizer
	grants   *fakeGrants
	dir      *fakeDirectory
	ownReads *fakeOwnReads
	readers  *fakeReaders
	clock    *clock.Fake
	svc      *app.Service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		store: newFakeStore(), appender: &fakeAppender{}, redactor: &fakeRedactor{}, authz: newFakeAuthorizer(),
		grants: &fakeGrants{}, ownReads: &fakeOwnReads{}, readers: &fakeReaders{}, clock: clock.NewFake(start),
		dir: &fakeDirectory{
			refs: map[uuid.UUID]identity.PrincipalRef{
				alex:  {ID: alex, Kind: actor.KindPerson, DisplayName: "Alex", Handle: "alex"},
				sam:   {ID: sam, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"},
				robin: {ID: robin, Kind: actor.KindAgent, DisplayName: "Robin", Handle: "robin"},
			},
			inactive: map[uuid.UUID]bool{},
		},
	}
	e.tx = &fakeTx{store: e.store, appender: e.appender}
	svc, err := app.New(app.Deps{
		Store: e.store, Tx: e.tx, Appender: e.appender, Redactor: e.redactor, Authorizer: e.authz,
		Grants: e.grants, Principals: e.dir, OwnReads: e.ownReads, Readers: e.readers, Clock: e.clock, Config: testConfig,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.svc = svc
	return e
}

// as returns a context acting as the person p.
func as(t *testing.T, p uuid.UUID) context.Context {
	return actor.With(t.Context(), actor.Actor{PrincipalID: p, Kind: actor.KindPerson})
}

// placed is what a test expects of an event besides its payload: its type, actor, placement
// and resource.
type placed struct {
	typ                    string
	actor                  uuid.UUID
	space, channel, thread uuid.UUID
	kind                   kernel.ResourceKind
	resource               uuid.UUID
}

func placement(e kernel.Event) placed {
	return placed{
		typ: e.Type, actor: e.ActorID, space: e.SpaceID, channel: e.ChannelID, thread: e.ThreadID,
		kind: e.ResourceKind, resource: e.ResourceID,
	}
}

// newEvents returns the events committed since the test last looked (marked by seen).
func (e *env) newEvents(seen *int) []kernel.Event {
	all := e.appender.events()
	out := all[*seen:]
	*seen = len(all)
	return out
}

// wantEvents checks that got are exactly the events of want, in order, placed as want says
// and with no audience (every chat event is broadcast).
func wantEvents(t *testing.T, got []kernel.Event, want ...placed) {
	t.Helper()
	var have []placed
	for _, e := range got {
		have = append(have, placement(e))
		if e.AudienceID != uuid.Nil {
			t.Errorf("event %s has an audience %s", e.Type, e.AudienceID)
		}
	}
	if !slices.Equal(have, want) {
		t.Fatalf("events:\n got  %+v\n want %+v", have, want)
	}
}

// wantProblem checks that err is of the problem kind (and, for validation, names exactly
// fields).
func wantProblem(t *testing.T, err, kind error, fields ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if !errors.Is(kind, problem.ErrValidation) {
		return
	}
	var names []string
	for _, f := range problem.From(t.Context(), err).Errors {
		names = append(names, f.Field)
	}
	if !slices.Equal(names, fields) {
		t.Fatalf("invalid fields = %v, want %v (err %v)", names, fields, err)
	}
}

// time2h is a step of the fake clock.
const time2h = 2 * time.Hour

// errorsIs is errors.Is, short for the many checks of a problem kind.
func errorsIs(err, target error) bool { return errors.Is(err, target) }
