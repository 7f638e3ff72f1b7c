package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/agents"
	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/identity"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
)

var (
	errBoom = errors.New("boom")
	start   = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
)

type env struct {
	pool     *pgxpool.Pool
	runner   *tx.Runner
	identity *identityapp.Service
	store    *agentspg.Store
	appender kernel.Appender
	reader   *syncpg.Reader
	authz    *authorizetest.Authorizer
	svc      *app.Service
	alex     uuid.UUID // the actor who creates agents
}

// setup returns the agents use cases on a fresh database, over the real identity module and
// event log and an authorizer that allows everything.
func setup(t *testing.T) *env {
	t.Helper()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	idSvc, err := identityapp.New(identityapp.Deps{
		Store:    identitypg.New(runner),
		Tx:       runner,
		Clock:    clock.NewFake(start),
		Logger:   slog.New(slog.DiscardHandler),
		Config:   identityapp.Config{TokenTTL: time.Hour, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: identityPorts{}, Owners: identityPorts{}, Instance: identityPorts{},
	})
	if err != nil {
		t.Fatalf("identity: %v", err)
	}
	counters := instancepg.New(runner)
	appender, err := syncpg.NewAppender(runner, counters, syncpg.AppendConfig{Concurrency: 4})
	if err != nil {
		t.Fatalf("appender: %v", err)
	}
	e := &env{
		pool: pool, runner: runner, identity: idSvc, store: agentspg.New(runner), appender: appender,
		reader: syncpg.NewReader(runner), authz: &authorizetest.Authorizer{},
	}
	e.svc = e.service(t, e.store, e.appender)
	alex, err := idSvc.CreatePerson(t.Context(), identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: "alex@example.com"})
	if err != nil {
		t.Fatalf("create Alex: %v", err)
	}
	e.alex = alex.ID
	return e
}

// service returns the use cases over store and appender and e's other collaborators.
func (e *env) service(t *testing.T, store app.Store, appender kernel.Appender) *app.Service {
	t.Helper()
	svc, err := app.New(app.Deps{
		Tx: e.runner, Store: store, Principals: e.identity, Directory: e.identity, Appender: appender, Authorizer: e.authz,
	})
	if err != nil {
		t.Fatalf("agents: %v", err)
	}
	return svc
}

// ctx returns a context whose actor is Alex.
func (e *env) ctx(t *testing.T) context.Context {
	return actor.With(t.Context(), actor.Actor{PrincipalID: e.alex, Kind: actor.KindPerson})
}

// create creates an agent as Alex or fails the test.
func (e *env) create(t *testing.T, handle string) agents.Agent {
	t.Helper()
	a, err := e.svc.Create(e.ctx(t), agents.CreateInput{DisplayName: "Agent " + handle, Handle: handle})
	if err != nil {
		t.Fatalf("create %s: %v", handle, err)
	}
	return a
}

func (e *env) events(t *testing.T) []domain.StoredEvent {
	t.Helper()
	evs, err := e.reader.EventsAfter(t.Context(), 0, 1000)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// list lists the agents as Alex or fails the test.
func (e *env) list(t *testing.T) []agents.Agent {
	t.Helper()
	got, err := e.svc.List(e.ctx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return got
}

func TestCreateAgent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	got, err := e.svc.Create(e.ctx(t), agents.CreateInput{
		DisplayName: " Robin ", Handle: "Robin", Description: "  Summarises long threads.\n",
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	want := agents.Agent{
		ID: got.ID, DisplayName: "Robin", Handle: "robin", Description: "Summarises long threads.",
		CreatedBy: e.alex, CreatedAt: start,
	}
	if got != want || got.ID == uuid.Nil {
		t.Fatalf("Create = %+v, want %+v", got, want)
	}
	p, err := e.identity.Get(t.Context(), got.ID)
	if err != nil || p.Kind != actor.KindAgent || p.Handle != "robin" {
		t.Fatalf("principal = %+v, %v; want an agent principal robin", p, err)
	}
	if list := e.list(t); !slices.Equal(list, []agents.Agent{want}) {
		t.Fatalf("List = %+v, want %+v", list, []agents.Agent{want})
	}

	evs := e.events(t)
	if len(evs) != 1 {
		t.Fatalf("events = %+v, want exactly agent.created", evs)
	}
	ev := evs[0]
	if ev.Type != app.AgentCreated || ev.ResourceKind != kernel.ResourceAgent || ev.ResourceID != got.ID ||
		ev.ActorID != e.alex || ev.ReceiveAction != kernel.ActionAgentRead || ev.AudienceID != uuid.Nil {
		t.Fatalf("event = %+v", ev)
	}
	var payload map[string]string
	if err := json.Unmarshal(ev.Payload, &payload); err != nil {
		t.Fatalf("payload %s: %v", ev.Payload, err)
	}
	wantPayload := map[string]string{
		"agent_id": got.ID.String(), "display_name": "Robin", "handle": "robin",
		"description": "Summarises long threads.", "created_by": e.alex.String(),
	}
	if fmt.Sprint(payload) != fmt.Sprint(wantPayload) {
		t.Fatalf("payload = %v, want %v", payload, wantPayload)
	}
}

func TestCreateAgentWithoutDescriptionOmitsIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	got := e.create(t, "sam-bot")
	if got.Description != "" {
		t.Fatalf("description = %q, want empty", got.Description)
	}
	evs := e.events(t)
	if len(evs) != 1 || strings.Contains(string(evs[0].Payload), "description") {
		t.Fatalf("events = %+v, want agent.created without a description", evs)
	}
}

func TestCreateAgentValidation(t *testing.T) {
	t.Parallel()
	e := setup(t)
	long := strings.Repeat("r", 101)
	tests := []struct {
		name       string
		in         agents.CreateInput
		wantFields []string
	}{
		{name: "empty display name", in: agents.CreateInput{Handle: "robin"}, wantFields: []string{"display_name"}},
		{name: "blank display name", in: agents.CreateInput{DisplayName: "  ", Handle: "robin"}, wantFields: []string{"display_name"}},
		{name: "over-long display name", in: agents.CreateInput{DisplayName: long, Handle: "robin"}, wantFields: []string{"display_name"}},
		{name: "empty handle", in: agents.CreateInput{DisplayName: "Robin"}, wantFields: []string{"handle"}},
		{name: "handle of one character", in: agents.CreateInput{DisplayName: "Robin", Handle: "r"}, wantFields: []string{"handle"}},
		{name: "handle with a space", in: agents.CreateInput{DisplayName: "Robin", Handle: "ro bin"}, wantFields: []string{"handle"}},
		{name: "handle ending in a dot", in: agents.CreateInput{DisplayName: "Robin", Handle: "robin."}, wantFields: []string{"handle"}},
		{name: "description too long", in: agents.CreateInput{DisplayName: "Robin", Handle: "robin", Description: strings.Repeat("d", 501)}, wantFields: []string{"description"}},
		{name: "description with a control character", in: agents.CreateInput{DisplayName: "Robin", Handle: "robin", Description: "a\x00b"}, wantFields: []string{"description"}},
		{name: "everything invalid", in: agents.CreateInput{DisplayName: long, Handle: "-", Description: strings.Repeat("d", 501)}, wantFields: []string{"display_name", "handle", "description"}},
	}
	// The group returns once its parallel cases are done, so the checks after it see them all.
	t.Run("cases", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, err := e.svc.Create(e.ctx(t), tc.in)
				if !errors.Is(err, problem.ErrValidation) {
					t.Fatalf("Create = %v, want a validation error", err)
				}
				var fields []string
				for _, f := range problem.From(t.Context(), err).Errors {
					fields = append(fields, f.Field)
				}
				if !slices.Equal(fields, tc.wantFields) {
					t.Fatalf("fields = %v, want %v", fields, tc.wantFields)
				}
			})
		}
	})
	// Nothing of the refused requests was stored: no event exists, and robin is still free.
	if evs := e.events(t); len(evs) != 0 {
		t.Fatalf("refused requests appended %d events", len(evs))
	}
	e.create(t, "robin")
}

func TestCreateAgentHandleTaken(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.create(t, "robin")
	before := e.events(t)
	for _, in := range []agents.CreateInput{
		{DisplayName: "Another Robin", Handle: "ROBIN"},
		{DisplayName: "Alex's agent", Handle: "alex"}, // a person's handle: handles are unique across kinds
	} {
		if _, err := e.svc.Create(e.ctx(t), in); !errors.Is(err, problem.ErrConflict) || !errors.Is(err, identity.ErrHandleTaken) {
			t.Fatalf("Create(%s) = %v, want ErrHandleTaken", in.Handle, err)
		}
	}
	// A bad description is reported as bad input, before the conflict.
	_, err := e.svc.Create(e.ctx(t), agents.CreateInput{DisplayName: "Robin", Handle: "robin", Description: strings.Repeat("d", 501)})
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("Create with a taken handle and a bad description = %v, want a validation error", err)
	}
	if after := e.events(t); len(after) != len(before) || len(e.list(t)) != 1 {
		t.Fatalf("refused creations left events or agents")
	}
}

func TestCreateAgentIsOneTransaction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, e *env) error
	}{
		{name: "profile insert fails", run: func(t *testing.T, e *env) error {
			_, err := e.service(t, failingStore{Store: e.store, insertErr: errBoom}, e.appender).
				Create(e.ctx(t), agents.CreateInput{DisplayName: "Robin", Handle: "robin"})
			return err
		}},
		{name: "append fails", run: func(t *testing.T, e *env) error {
			_, err := e.service(t, e.store, failingAppender{err: errBoom}).
				Create(e.ctx(t), agents.CreateInput{DisplayName: "Robin", Handle: "robin"})
			return err
		}},
		{name: "caller rolls back", run: func(t *testing.T, e *env) error {
			return e.runner.RunInTx(e.ctx(t), func(ctx context.Context) error {
				if _, err := e.svc.Create(ctx, agents.CreateInput{DisplayName: "Robin", Handle: "robin"}); err != nil {
					return err
				}
				return errBoom
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			if err := tc.run(t, e); !errors.Is(err, errBoom) {
				t.Fatalf("error = %v, want %v", err, errBoom)
			}
			// Nothing stayed: no event, no profile, and the handle is free (no principal).
			if evs := e.events(t); len(evs) != 0 {
				t.Fatalf("events = %+v, want none", evs)
			}
			if list := e.list(t); len(list) != 0 {
				t.Fatalf("agents = %+v, want none", list)
			}
			e.create(t, "robin")
		})
	}
}

func TestCreateAgentWithoutActor(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.svc.Create(t.Context(), agents.CreateInput{DisplayName: "Robin", Handle: "robin"}); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Create without an actor = %v, want ErrUnauthenticated", err)
	}
}

func TestListAgentsFiltersByAgentRead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	robin := e.create(t, "robin")
	hidden := e.create(t, "hidden-bot")
	forbidden := e.create(t, "forbidden-bot")
	archived := e.create(t, "archived-bot")
	sam := e.create(t, "sam-bot")
	if _, err := e.pool.Exec(t.Context(), "UPDATE agents.agents SET archived_at = created_at WHERE principal_id = $1", archived.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	e.authz.Rule = denyIDs(map[uuid.UUID]error{
		hidden.ID:    fmt.Errorf("authz: %w", problem.ErrNotFound),
		forbidden.ID: problem.ErrForbidden,
	})
	got := e.list(t)
	want := []agents.Agent{robin, sam} // ordered by handle
	if !slices.Equal(got, want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	// Every active agent was decided once, in filter mode, as agent.read on the agent.
	calls := e.authz.Calls()
	var decided []uuid.UUID
	for _, c := range calls {
		if c.Action != kernel.ActionAgentRead || c.Res.Kind != kernel.ResourceAgent || !c.Filter {
			t.Fatalf("authorize call %+v, want agent.read on an agent in filter mode", c)
		}
		decided = append(decided, c.Res.ID)
	}
	slices.SortFunc(decided, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	wantDecided := []uuid.UUID{robin.ID, hidden.ID, forbidden.ID, sam.ID}
	slices.SortFunc(wantDecided, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(decided, wantDecided) {
		t.Fatalf("decided %v, want %v (the archived agent is not even asked about)", decided, wantDecided)
	}
}

func TestListAgentsEmpty(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if got := e.list(t); got == nil || len(got) != 0 {
		t.Fatalf("List = %#v, want an empty, non-nil list", got)
	}
}

func TestListAgentsFailures(t *testing.T) {
	t.Parallel()
	e := setup(t)
	robin := e.create(t, "robin")
	tests := []struct {
		name string
		svc  func(t *testing.T) *app.Service
		deny error
		want error
	}{
		{name: "store fails", want: errBoom, svc: func(t *testing.T) *app.Service {
			return e.service(t, failingStore{Store: e.store, listErr: errBoom}, e.appender)
		}},
		{name: "pending device is no denial", deny: problem.ErrDevicePending, want: problem.ErrDevicePending},
		{name: "authorizer fails", deny: errBoom, want: errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			authz := &authorizetest.Authorizer{Rule: denyIDs(map[uuid.UUID]error{robin.ID: tc.deny})}
			svc, err := app.New(app.Deps{
				Tx: e.runner, Store: e.store, Principals: e.identity, Directory: e.identity, Appender: e.appender, Authorizer: authz,
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if tc.svc != nil {
				svc = tc.svc(t)
			}
			if _, err := svc.List(e.ctx(t)); !errors.Is(err, tc.want) {
				t.Fatalf("List = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	_, err := app.New(app.Deps{})
	if err == nil {
		t.Fatal("New without dependencies succeeded")
	}
	for _, name := range []string{"transaction runner", "store", "principals", "directory", "appender", "authorizer"} {
		if !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name the %s", err, name)
		}
	}
}

// identityPorts are identity's event ports for a test that does not look at identity's
// events: the appender drops them, no principal owns the instance, the instance is one id.
type identityPorts struct{}

func (identityPorts) Append(context.Context, ...kernel.Event) error { return nil }

func (identityPorts) InstanceOwners(context.Context) ([]uuid.UUID, error) { return nil, nil }

func (identityPorts) InstanceID(context.Context) (uuid.UUID, error) {
	return uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa"), nil
}
