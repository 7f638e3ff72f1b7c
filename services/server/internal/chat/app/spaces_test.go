package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// space creates a space as alex and returns it.
func (e *env) space(t *testing.T, name string) chat.Space {
	t.Helper()
	sp, err := e.svc.Spaces().Create(as(t, alex), chat.SpaceInput{Name: name})
	if err != nil {
		t.Fatalf("create space %s: %v", name, err)
	}
	return sp
}

func TestCreateSpace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := 0
	sp, err := e.svc.Spaces().Create(as(t, alex), chat.SpaceInput{Name: " Support ", Description: "Help for Sam"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if sp.ID == uuid.Nil || sp.Name != "Support" || sp.Description != "Help for Sam" || sp.Version != 1 || !sp.CreatedAt.Equal(start) {
		t.Fatalf("space = %+v", sp)
	}
	if got := e.authz.Calls(); len(got) != 1 || got[0].Action != kernel.ActionSpaceCreate || got[0].Res != authorize.Instance() {
		t.Fatalf("authorized %+v, want space.create on the instance", got)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "space.created", actor: alex, space: sp.ID, kind: kernel.ResourceSpace, resource: sp.ID})
	if p := payload(evs[0]); p["name"] != "Support" || p["description"] != "Help for Sam" || p["version"] != 1.0 {
		t.Errorf("payload = %v", p)
	}

	// A space without description has none in its payload.
	bare := e.space(t, "Marketing")
	evs = e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "space.created", actor: alex, space: bare.ID, kind: kernel.ResourceSpace, resource: bare.ID})
	if _, ok := payload(evs[0])["description"]; ok {
		t.Errorf("payload %v has a description", payload(evs[0]))
	}

	before := e.store.sizes()
	tests := []struct {
		name  string
		setup func()
		in    chat.SpaceInput
		kind  error
	}{
		{"invalid", func() {}, chat.SpaceInput{Name: " ", Description: strings.Repeat("d", domain.MaxDescriptionLen+1)}, problem.ErrValidation},
		{"forbidden", func() { e.authz.denyOn(kernel.ActionSpaceCreate, uuid.Nil, problem.ErrForbidden) }, chat.SpaceInput{Name: "Sales"}, problem.ErrForbidden},
		{"store fails", func() {
			e.authz.denyOn(kernel.ActionSpaceCreate, uuid.Nil, nil)
			e.store.fail("InsertSpace", errDB)
		}, chat.SpaceInput{Name: "Sales"}, errDB},
		{"appender fails", func() { e.appender.fail(errDB) }, chat.SpaceInput{Name: "Sales"}, errDB},
	}
	for _, tc := range tests {
		tc.setup()
		txs := e.tx.count()
		_, err := e.svc.Spaces().Create(as(t, alex), tc.in)
		if errorsIs(tc.kind, problem.ErrValidation) {
			wantProblem(t, err, tc.kind, "name", "description")
		} else {
			wantProblem(t, err, tc.kind)
		}
		// Refused input and denials are answered before any transaction opens.
		if opened := e.tx.count() - txs; errorsIs(tc.kind, errDB) != (opened == 1) {
			t.Errorf("%s: %d transactions opened", tc.name, opened)
		}
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v, want none", tc.name, got)
		}
		if got := e.store.sizes(); got != before {
			t.Errorf("%s: store %v, want %v (nothing written)", tc.name, got, before)
		}
	}
	if _, err := e.svc.Spaces().Create(t.Context(), chat.SpaceInput{Name: "Sales"}); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("Create without actor = %v, want unauthenticated", err)
	}
}

func TestListSpaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	support, marketing, hidden, archived := e.space(t, "Support"), e.space(t, "Marketing"), e.space(t, "Hidden"), e.space(t, "Old")
	if _, err := e.svc.Spaces().Archive(as(t, alex), archived.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	e.authz.scope = authz.NewScope(sam, 1, []authz.Grant{{PrincipalID: sam, ResourceKind: kernel.ResourceInstance, ResourceID: uuid.New(), Role: authz.RoleViewer}}, nil)
	e.authz.denyOn(kernel.ActionSpaceRead, hidden.ID, problem.ErrNotFound)
	e.authz.denyOn(kernel.ActionSpaceArchive, support.ID, problem.ErrForbidden)
	e.authz.denyOn(kernel.ActionSpaceUpdate, support.ID, problem.ErrForbidden)
	e.authz.levels[support.ID] = authz.RoleMember
	e.authz.levels[marketing.ID] = authz.RoleAdmin
	e.authz.Reset()

	views, err := e.svc.Spaces().List(as(t, sam))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(views) != 2 || views[0].Space.ID != marketing.ID || views[1].Space.ID != support.ID {
		t.Fatalf("List = %+v, want Marketing then Support (Hidden denied, Old archived)", views)
	}
	wantAll := []kernel.Action{kernel.ActionChannelCreate, kernel.ActionGrantAdmin, kernel.ActionSpaceArchive, kernel.ActionSpaceUpdate}
	if v := views[0]; v.Level != authz.RoleAdmin || !slices.Equal(v.Capabilities, wantAll) {
		t.Errorf("Marketing view = %+v", v)
	}
	if v := views[1]; v.Level != authz.RoleMember || !slices.Equal(v.Capabilities, []kernel.Action{kernel.ActionChannelCreate, kernel.ActionGrantAdmin}) {
		t.Errorf("Support view = %+v", v)
	}
	calls := e.authz.Calls()
	if calls[0].Action != kernel.ActionSpaceRead || calls[0].Res != authorize.Instance() || calls[0].Filter {
		t.Errorf("first decision %+v, want space.read on the instance, audited", calls[0])
	}
	for _, c := range calls[1:] {
		if !c.Filter || c.Res.Kind != kernel.ResourceSpace || c.Res.SpaceID != c.Res.ID {
			t.Errorf("item decision %+v, want filter mode on a space with its space id", c)
		}
	}

	e.authz.denyOn(kernel.ActionSpaceRead, uuid.Nil, problem.ErrDevicePending)
	if _, err := e.svc.Spaces().List(as(t, sam)); !errorsIs(err, problem.ErrDevicePending) {
		t.Errorf("List with a pending device = %v", err)
	}
	e.authz.denyOn(kernel.ActionSpaceRead, uuid.Nil, nil)
	e.authz.denyOn(kernel.ActionSpaceRead, support.ID, errDB)
	if _, err := e.svc.Spaces().List(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("List with a failing decision = %v", err)
	}
	e.authz.denyOn(kernel.ActionSpaceRead, support.ID, nil)
	e.authz.denyOn(kernel.ActionChannelCreate, support.ID, errDB)
	if _, err := e.svc.Spaces().List(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("List with a failing capability = %v", err)
	}
	e.store.fail("Spaces", errDB)
	if _, err := e.svc.Spaces().List(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("List with a failing store = %v", err)
	}
	if _, err := e.svc.Spaces().List(t.Context()); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("List without actor = %v", err)
	}
	e.authz.fail = errDB
	if _, err := e.svc.Spaces().List(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("List with a failing authorizer = %v", err)
	}
}

func TestListSpacesAsksTheStoreForTheScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine, other := e.space(t, "Support"), e.space(t, "Marketing")
	e.authz.scope = authz.NewScope(sam, 1, []authz.Grant{{PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: mine.ID, Role: authz.RoleMember}}, nil)
	views, err := e.svc.Spaces().List(as(t, sam))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(views) != 1 || views[0].Space.ID != mine.ID {
		t.Fatalf("List = %+v, want only %s (not %s)", views, mine.ID, other.ID)
	}
}

func TestArchiveSpace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	seen := len(e.appender.events())
	e.clock.Advance(time2h)
	got, err := e.svc.Spaces().Archive(as(t, alex), sp.ID)
	if err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if !got.ArchivedAt.Equal(start.Add(time2h)) || got.Version != 2 {
		t.Fatalf("archived = %+v", got)
	}
	calls := e.authz.Calls()
	if last := calls[len(calls)-1]; last.Action != kernel.ActionSpaceArchive || last.Res != (authorize.Resource{Kind: kernel.ResourceSpace, ID: sp.ID, SpaceID: sp.ID}) {
		t.Errorf("authorized %+v, want space.archive on the space", last)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "space.archived", actor: alex, space: sp.ID, kind: kernel.ResourceSpace, resource: sp.ID})
	if p := payload(evs[0]); p["version"] != 2.0 || p["archived_at"] != start.Add(time2h).Format("2006-01-02T15:04:05Z07:00") {
		t.Errorf("payload = %v", p)
	}

	again, err := e.svc.Spaces().Archive(as(t, alex), sp.ID)
	if err != nil || !again.ArchivedAt.Equal(got.ArchivedAt) || again.Version != 2 {
		t.Fatalf("second Archive = %+v, %v; want it unchanged", again, err)
	}
	if evs := e.newEvents(&seen); len(evs) != 0 {
		t.Fatalf("second Archive appended %v", evs)
	}

	other := e.space(t, "Marketing")
	seen = len(e.appender.events())
	e.authz.denyOn(kernel.ActionSpaceArchive, other.ID, problem.ErrForbidden)
	if _, err := e.svc.Spaces().Archive(as(t, sam), other.ID); !errorsIs(err, problem.ErrForbidden) {
		t.Fatalf("Archive denied = %v", err)
	}
	if _, err := e.svc.Spaces().Archive(as(t, sam), uuid.New()); !errorsIs(err, problem.ErrNotFound) {
		t.Fatalf("Archive unknown = %v", err)
	}
	e.authz.denyOn(kernel.ActionSpaceArchive, other.ID, nil)
	e.store.fail("UpdateSpace", errDB)
	if _, err := e.svc.Spaces().Archive(as(t, sam), other.ID); !errorsIs(err, errDB) {
		t.Fatalf("Archive with a failing store = %v", err)
	}
	if _, err := e.svc.Spaces().Archive(t.Context(), other.ID); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("Archive without actor = %v", err)
	}
	if evs := e.newEvents(&seen); len(evs) != 0 {
		t.Fatalf("failed archives appended %v", evs)
	}
	if sp, _ := e.svc.Channels().Get(t.Context(), other.ID); sp.ID != uuid.Nil {
		t.Fatalf("a space id found a channel")
	}
}
