package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	gosync "sync"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

var errBoom = errors.New("boom")

// payload decodes an event payload into a map.
func payload(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("payload %s: %v", raw, err)
	}
	return m
}

func TestGrantChangesAppendTheirEventsAndAdvanceTheVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	space := e.directory.space()

	for _, step := range []struct {
		name    string
		change  func() authz.Grant
		grantEv string
	}{
		{"grant", func() authz.Grant { return e.grant(t, alex, sam, kernel.ResourceSpace, space, authz.RoleMember) }, app.EventGrantCreated},
		{"revoke", func() authz.Grant {
			gs, err := e.store.OfPrincipal(t.Context(), sam)
			if err != nil || len(gs) != 1 {
				t.Fatalf("grants of sam = %v, %v", gs, err)
			}
			g, err := e.grants.Revoke(asPerson(t.Context(), alex), gs[0].ID)
			if err != nil {
				t.Fatalf("Revoke: %v", err)
			}
			return g
		}, app.EventGrantRevoked},
	} {
		head, version := e.head(t), e.permissionVersion(t)
		g := step.change()
		if got := e.permissionVersion(t); got != version+1 {
			t.Fatalf("%s: permission_version %d, want %d", step.name, got, version+1)
		}
		if got := e.floor.Load(); got != version+1 {
			t.Fatalf("%s: the Authorizer's floor %d after the commit, want %d", step.name, got, version+1)
		}
		evs := e.eventsAfter(t, head)
		if len(evs) != 2 {
			t.Fatalf("%s: %d events, want exactly 2: %+v", step.name, len(evs), evs)
		}
		ge, pe := evs[0], evs[1]
		if ge.Type != step.grantEv || ge.ResourceKind != kernel.ResourceGrant || ge.ResourceID != g.ID ||
			ge.AudienceID != sam || ge.ActorID != alex || ge.ReceiveAction != "" {
			t.Errorf("%s: grant event %+v", step.name, ge)
		}
		want := map[string]any{"grant_id": g.ID.String(), "principal_id": sam.String(), "resource_kind": "space", "resource_id": space.String(), "role": "member"}
		if got := payload(t, ge.Payload); !mapsEqual(got, want) {
			t.Errorf("%s: grant payload %v, want %v", step.name, got, want)
		}
		if pe.Type != app.EventPermissionsChanged || pe.ResourceKind != kernel.ResourcePrincipal || pe.ResourceID != sam || pe.AudienceID != sam {
			t.Errorf("%s: permissions event %+v", step.name, pe)
		}
		want = map[string]any{"principal_id": sam.String(), "permission_version": float64(version + 1)}
		if got := payload(t, pe.Payload); !mapsEqual(got, want) {
			t.Errorf("%s: permissions payload %v, want %v", step.name, got, want)
		}
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRolledBackGrantChangesLeaveNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	kept := e.grant(t, alex, sam, kernel.ResourceInstance, uuid.Nil, authz.RoleViewer)
	head, version := e.head(t), e.permissionVersion(t)

	err := e.runner.RunInTx(asPerson(t.Context(), alex), func(ctx context.Context) error {
		if _, err := e.grants.Grant(ctx, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceChannel, ResourceID: uuid.New(), Role: authz.RoleMember}); err != nil {
			return err
		}
		if _, err := e.grants.Revoke(ctx, kept.ID); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want boom", err)
	}
	gs, err := e.store.OfPrincipal(t.Context(), sam)
	if err != nil || len(gs) != 1 || gs[0].ID != kept.ID {
		t.Fatalf("grants after rollback = %v, %v; want only the kept one", gs, err)
	}
	if got := e.eventsAfter(t, head); len(got) != 0 {
		t.Fatalf("events after rollback = %+v, want none", got)
	}
	if got := e.permissionVersion(t); got != version {
		t.Fatalf("permission_version after rollback = %d, want %d", got, version)
	}
	if got := e.floor.Load(); got != version {
		t.Fatalf("the Authorizer's floor after rollback = %d, want %d", got, version)
	}
}

func TestScopeCacheFollowsEveryGrantChangeAndNoChannelCreation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	space := e.directory.space()
	ctx := asPerson(t.Context(), sam)
	scope := func() authz.Scope {
		t.Helper()
		s, err := e.auth.Scope(t.Context(), sam)
		if err != nil {
			t.Fatalf("Scope: %v", err)
		}
		return s
	}
	if got := scope().FullyVisibleSpaceIDs(); len(got) != 0 {
		t.Fatalf("before: fully visible %v", got)
	}
	g := e.grant(t, alex, sam, kernel.ResourceSpace, space, authz.RoleViewer)
	if got := scope().FullyVisibleSpaceIDs(); !slices.Equal(got, []uuid.UUID{space}) {
		t.Fatalf("after grant: fully visible %v, want [%s]", got, space)
	}
	version := e.permissionVersion(t)
	channel := e.directory.channel(space)
	if got := e.permissionVersion(t); got != version {
		t.Fatalf("creating a channel changed permission_version %d -> %d", version, got)
	}
	if err := e.auth.Authorize(ctx, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}); err != nil {
		t.Fatalf("new channel in a fully visible space: %v", err)
	}
	if _, err := e.grants.Revoke(asPerson(t.Context(), alex), g.ID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if got := scope().FullyVisibleSpaceIDs(); len(got) != 0 {
		t.Fatalf("after revoke: fully visible %v", got)
	}
	if err := e.auth.Authorize(ctx, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: channel}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("after revoke: %v, want not found", err)
	}
}

// TestScopeOfAnUncommittedGrantIsNotCached: a Scope built inside a transaction may contain its
// uncommitted grants; cached, it would outlive a rollback at the same permission version.
func TestScopeOfAnUncommittedGrantIsNotCached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	err := e.runner.RunInTx(asPerson(t.Context(), alex), func(ctx context.Context) error {
		if _, err := e.grants.Grant(ctx, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceInstance, Role: authz.RoleAdmin}); err != nil {
			return err
		}
		s, err := e.auth.Scope(ctx, sam)
		if err != nil {
			return err
		}
		if !s.InstanceWide() {
			t.Error("inside the transaction the Scope sees its own grant")
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v", err)
	}
	s, err := e.auth.Scope(t.Context(), sam)
	if err != nil || s.InstanceWide() {
		t.Fatalf("after rollback: instance-wide %v, %v; want false", s.InstanceWide(), err)
	}
}

func TestTheLastOwnerStays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	a := e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	if _, err := e.grants.Revoke(asPerson(t.Context(), alex), a.ID); !errors.Is(err, app.ErrLastOwner) || !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("revoke the last owner = %v, want ErrLastOwner (conflict)", err)
	}
	s := e.grant(t, alex, sam, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	// Two owners revoke each other at once: exactly one succeeds.
	var (
		wg   gosync.WaitGroup
		errs = make([]error, 2)
	)
	for i, g := range []authz.Grant{a, s} {
		wg.Go(func() {
			_, errs[i] = e.grants.Revoke(asPerson(t.Context(), alex), g.ID)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, app.ErrLastOwner):
			t.Errorf("concurrent revoke: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("concurrent revokes of both owners: %d succeeded (%v), want exactly 1", ok, errs)
	}
}

func TestCreateGrantDecidesOnTheTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	mine, other := e.directory.space(), e.directory.space()
	inMine := e.directory.channel(mine)
	e.grant(t, alex, sam, kernel.ResourceSpace, mine, authz.RoleAdmin)
	viewer := e.person(t, "viewer")
	e.grant(t, alex, viewer, kernel.ResourceSpace, mine, authz.RoleViewer)
	e.grant(t, alex, viewer, kernel.ResourceInstance, uuid.Nil, authz.RoleAdmin)

	tests := []struct {
		name string
		by   uuid.UUID
		in   authz.GrantInput
		want error // nil: allowed
	}{
		{"space admin grants on the space", sam, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceSpace, ResourceID: mine, Role: authz.RoleMember}, nil},
		{"space admin grants on its channel", sam, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceChannel, ResourceID: inMine, Role: authz.RoleAdmin}, nil},
		{"space admin: another space is invisible", sam, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceSpace, ResourceID: other, Role: authz.RoleMember}, problem.ErrNotFound},
		{"space admin: a missing space is the same 404", sam, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceSpace, ResourceID: uuid.New(), Role: authz.RoleMember}, problem.ErrNotFound},
		{"space admin: the instance is 403", sam, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceInstance, Role: authz.RoleViewer}, problem.ErrForbidden},
		{"nobody: the instance is 403", robin, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceInstance, Role: authz.RoleViewer}, problem.ErrForbidden},
		{"instance admin may not grant owner", viewer, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceInstance, Role: authz.RoleOwner}, app.ErrOwnerOnly},
		{"owner grants owner", alex, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceInstance, Role: authz.RoleOwner}, nil},
		{"owner: a missing channel is 404", alex, authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceChannel, ResourceID: uuid.New(), Role: authz.RoleMember}, problem.ErrNotFound},
		{"a missing principal", alex, authz.GrantInput{PrincipalID: uuid.New(), ResourceKind: kernel.ResourceSpace, ResourceID: other, Role: authz.RoleMember}, problem.ErrValidation},
		{"a second grant on one resource", alex, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: mine, Role: authz.RoleViewer}, problem.ErrConflict},
		{"another id for the instance", alex, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceInstance, ResourceID: uuid.New(), Role: authz.RoleViewer}, problem.ErrValidation},
		{"owner on a space", alex, authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: other, Role: authz.RoleOwner}, problem.ErrValidation},
	}
	for _, tc := range tests { // sequential: the cases build on each other's grants
		_, err := e.grants.CreateGrant(asPerson(t.Context(), tc.by), tc.in)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: CreateGrant = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestCreateGrantNamesEveryBadField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex := e.person(t, "alex")
	_, err := e.grants.CreateGrant(asPerson(t.Context(), alex), authz.GrantInput{ResourceKind: "thread", Role: "king"})
	p := problem.From(t.Context(), err)
	var fields []string
	for _, f := range p.Errors {
		fields = append(fields, f.Field)
	}
	if p.Code != "validation_failed" || !slices.Equal(fields, []string{"principal_id", "resource_kind", "role"}) {
		t.Fatalf("problem %+v, want validation_failed naming principal_id, resource_kind, role", p)
	}
	_, err = e.grants.CreateGrant(asPerson(t.Context(), alex), authz.GrantInput{PrincipalID: alex, ResourceKind: kernel.ResourceChannel, Role: authz.RoleMember})
	if p := problem.From(t.Context(), err); len(p.Errors) != 1 || p.Errors[0].Field != "resource_id" {
		t.Fatalf("channel without id: %+v", p)
	}
}

func TestRevokeGrantHidesWhatTheActorCannotSee(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	space := e.directory.space()
	seen, hidden := e.directory.channel(space), e.directory.channel(space)
	e.grant(t, alex, sam, kernel.ResourceChannel, seen, authz.RoleMember)
	onSeen := e.grant(t, alex, robin, kernel.ResourceChannel, seen, authz.RoleMember)
	onHidden := e.grant(t, alex, robin, kernel.ResourceChannel, hidden, authz.RoleMember)
	ctx := asPerson(t.Context(), sam)
	for _, tc := range []struct {
		name string
		id   uuid.UUID
		want error
	}{
		{"missing grant", uuid.New(), problem.ErrNotFound},
		{"grant on a channel sam cannot see", onHidden.ID, problem.ErrNotFound},
		{"grant on a channel sam sees but does not administer", onSeen.ID, problem.ErrForbidden},
	} {
		if err := e.grants.RevokeGrant(ctx, tc.id); !errors.Is(err, tc.want) {
			t.Errorf("%s: RevokeGrant = %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := e.grants.RevokeGrant(asPerson(t.Context(), alex), onSeen.ID); err != nil {
		t.Fatalf("owner revokes: %v", err)
	}
	if err := e.grants.RevokeGrant(asPerson(t.Context(), alex), onSeen.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("revoke twice = %v, want not found", err)
	}
}

func TestListGrantsShowsOnlyManagedGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	space := e.directory.space()
	mine, theirs := e.directory.channel(space), e.directory.channel(space)
	e.grant(t, alex, sam, kernel.ResourceChannel, mine, authz.RoleAdmin)
	r1 := e.grant(t, alex, robin, kernel.ResourceChannel, mine, authz.RoleViewer)
	e.grant(t, alex, robin, kernel.ResourceChannel, theirs, authz.RoleViewer)
	e.grant(t, alex, robin, kernel.ResourceSpace, space, authz.RoleViewer)

	collect := func(ctx context.Context, principal uuid.UUID) []authz.Grant {
		t.Helper()
		var out []authz.Grant
		after := uuid.Nil
		for range 100 {
			page, err := e.grants.ListGrants(ctx, principal, after, 0)
			if err != nil {
				t.Fatalf("ListGrants: %v", err)
			}
			out = append(out, page.Items...)
			if page.NextCursor == uuid.Nil {
				return out
			}
			after = page.NextCursor
		}
		t.Fatal("ListGrants never ended")
		return nil
	}
	if got := collect(asPerson(t.Context(), alex), uuid.Nil); len(got) != 5 {
		t.Errorf("owner lists %d grants, want all 5", len(got))
	}
	got := collect(asPerson(t.Context(), sam), robin)
	if len(got) != 1 || got[0].ID != r1.ID {
		t.Errorf("channel admin lists %v, want only robin's grant on its channel", got)
	}
	if got := collect(asPerson(t.Context(), sam), uuid.Nil); len(got) != 2 {
		t.Errorf("channel admin lists %d grants of everyone, want its own and robin's on its channel", len(got))
	}
}

func TestGrantsPortNeedsAnActor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.grants.Grant(t.Context(), authz.GrantInput{PrincipalID: uuid.New(), ResourceKind: kernel.ResourceInstance, Role: authz.RoleViewer})
	if !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Grant without actor = %v, want unauthenticated", err)
	}
	if _, err := e.grants.Revoke(t.Context(), uuid.New()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Revoke without actor = %v, want unauthenticated", err)
	}
	if _, err := app.NewGrants(app.GrantsDeps{}); err == nil || !strings.Contains(err.Error(), "page size") {
		t.Fatalf("NewGrants(no deps) = %v", err)
	}
}

func TestGrantsPortListsEveryPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // page size 3
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	var want []uuid.UUID
	for range 7 {
		want = append(want, e.grant(t, alex, sam, kernel.ResourceChannel, uuid.New(), authz.RoleViewer).ID)
	}
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	got, err := e.grants.List(t.Context(), sam)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ids []uuid.UUID
	for _, g := range got {
		ids = append(ids, g.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("List(sam) = %v, want %v", ids, want)
	}
	all, err := e.grants.List(t.Context(), uuid.Nil)
	if err != nil || len(all) != 8 {
		t.Fatalf("List(everyone) = %d grants, %v; want 8", len(all), err)
	}
}

func TestListGrantsLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // page size 3
	alex, sam := e.person(t, "alex"), e.person(t, "sam")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	for range 4 {
		e.grant(t, alex, sam, kernel.ResourceChannel, uuid.New(), authz.RoleViewer)
	}
	ctx := asPerson(t.Context(), alex)
	for _, tc := range []struct {
		limit, want int
	}{{0, 3}, {-1, 3}, {100, 3}, {2, 2}} {
		page, err := e.grants.ListGrants(ctx, uuid.Nil, uuid.Nil, tc.limit)
		if err != nil || len(page.Items) != tc.want || page.NextCursor == uuid.Nil {
			t.Errorf("limit %d: %d items, cursor %s, %v; want %d and a cursor", tc.limit, len(page.Items), page.NextCursor, err, tc.want)
		}
	}
	if _, err := e.grants.ListGrants(t.Context(), uuid.Nil, uuid.Nil, 0); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("ListGrants without actor = %v", err)
	}
}

// TestRevokeGrantOnAVanishedChannel: when its channel is gone, a grant is the instance
// administrators' to clean up.
func TestRevokeGrantOnAVanishedChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam, robin := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	channel := e.directory.direct(sam, robin)
	e.grant(t, alex, sam, kernel.ResourceChannel, channel, authz.RoleAdmin)
	g := e.grant(t, alex, robin, kernel.ResourceChannel, channel, authz.RoleMember)
	e.directory.drop(channel)
	if err := e.grants.RevokeGrant(asPerson(t.Context(), sam), g.ID); !errors.Is(err, problem.ErrForbidden) {
		t.Fatalf("channel admin revokes on a vanished channel = %v, want forbidden (instance admins only)", err)
	}
	if err := e.grants.RevokeGrant(asPerson(t.Context(), alex), g.ID); err != nil {
		t.Fatalf("owner revokes on a vanished channel: %v", err)
	}
}

func TestNewBootstrapperRefusesIncompleteDeps(t *testing.T) {
	t.Parallel()
	_, err := app.NewBootstrapper(app.BootstrapDeps{})
	for _, want := range []string{"runner", "store", "grants", "principals", "tokens"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewBootstrapper(no deps) = %v, want it to name %s", err, want)
		}
	}
}

// TestGrantOnADirectMessage: a direct message is private to its participants. No grant on it
// is made for anyone else, neither through Grant (the port every grant passes) nor through
// CreateGrant, whatever the role and whoever grants (an owner who takes part included);
// nothing is written. An owner who does not take part cannot even see it (404). Its
// participants' grants, and grants on a standard channel, are made as before.
func TestGrantOnADirectMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex, sam, robin, kim := e.person(t, "alex"), e.person(t, "sam"), e.person(t, "robin"), e.person(t, "kim")
	e.grant(t, alex, alex, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	e.grant(t, alex, kim, kernel.ResourceInstance, uuid.Nil, authz.RoleOwner)
	dm := e.directory.direct(alex, sam)
	e.grant(t, alex, alex, kernel.ResourceChannel, dm, authz.RoleMember)
	e.grant(t, alex, sam, kernel.ResourceChannel, dm, authz.RoleMember)
	before := e.permissionVersion(t)
	for _, role := range []authz.Role{authz.RoleViewer, authz.RoleMember, authz.RoleAdmin} {
		in := authz.GrantInput{PrincipalID: robin, ResourceKind: kernel.ResourceChannel, ResourceID: dm, Role: role}
		if _, err := e.grants.Grant(asPerson(t.Context(), alex), in); !errors.Is(err, problem.ErrConflict) || !errors.Is(err, app.ErrDirectMessagePrivate) {
			t.Errorf("Grant %s on the DM to a non-participant = %v, want ErrDirectMessagePrivate (conflict)", role, err)
		}
		if _, err := e.grants.CreateGrant(asPerson(t.Context(), alex), in); !errors.Is(err, app.ErrDirectMessagePrivate) {
			t.Errorf("CreateGrant %s on the DM to a non-participant by an owner who takes part = %v, want ErrDirectMessagePrivate", role, err)
		}
		if _, err := e.grants.CreateGrant(asPerson(t.Context(), kim), in); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("CreateGrant %s on the DM by an owner who does not take part = %v, want not found", role, err)
		}
	}
	if after := e.permissionVersion(t); after != before {
		t.Errorf("permission_version %d -> %d: a refused grant wrote something", before, after)
	}
	e.grant(t, alex, robin, kernel.ResourceChannel, e.directory.channel(e.directory.space()), authz.RoleViewer)
}
