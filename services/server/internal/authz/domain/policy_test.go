package domain_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/domain"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// Fixed ids of the scene the table tests play in: space S1 holds channels C1 and C2, space S2
// holds C3, D1 is a direct-message channel (no space), T1 a thread of C1, M1 a message of T1.
var (
	alex  = uuid.MustParse("0190a6b2-0000-7000-8000-00000000a1e0")
	sam   = uuid.MustParse("0190a6b2-0000-7000-8000-0000000005a0")
	robin = uuid.MustParse("0190a6b2-0000-7000-8000-00000000b0b0")
	inst  = uuid.MustParse("0190a6b2-0000-7000-8000-000000000001")
	s1    = uuid.MustParse("0190a6b2-0000-7000-8000-000000000051")
	s2    = uuid.MustParse("0190a6b2-0000-7000-8000-000000000052")
	c1    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000c1")
	c2    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000c2")
	c3    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000c3")
	d1    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000d1")
	t1    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000e1")
	m1    = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000f1")
	ag1   = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000a9")
)

var spaceOf = map[uuid.UUID]uuid.UUID{c1: s1, c2: s1, c3: s2}

func grant(p uuid.UUID, kind kernel.ResourceKind, id uuid.UUID, role authz.Role) authz.Grant {
	return authz.Grant{ID: uuid.New(), PrincipalID: p, ResourceKind: kind, ResourceID: id, Role: role}
}

func scopeOf(p uuid.UUID, grants ...authz.Grant) authz.Scope {
	return authz.NewScope(p, 7, grants, spaceOf)
}

func person(id uuid.UUID) actor.Actor { return actor.Actor{PrincipalID: id, Kind: actor.KindPerson} }

func app(id uuid.UUID, scopes ...string) actor.Actor {
	return actor.Actor{PrincipalID: id, Kind: actor.KindApp, Scopes: scopes}
}

var (
	resInstance = authorize.Instance()
	resS1       = authorize.Resource{Kind: kernel.ResourceSpace, ID: s1, SpaceID: s1}
	resS2       = authorize.Resource{Kind: kernel.ResourceSpace, ID: s2, SpaceID: s2}
	resC1       = authorize.Resource{Kind: kernel.ResourceChannel, ID: c1, SpaceID: s1, ChannelID: c1}
	resC2       = authorize.Resource{Kind: kernel.ResourceChannel, ID: c2, SpaceID: s1, ChannelID: c2}
	resC3       = authorize.Resource{Kind: kernel.ResourceChannel, ID: c3, SpaceID: s2, ChannelID: c3}
	resD1       = authorize.Resource{Kind: kernel.ResourceChannel, ID: d1, ChannelID: d1}
	resT1       = authorize.Resource{Kind: kernel.ResourceThread, ID: t1, SpaceID: s1, ChannelID: c1, ThreadID: t1}
	resM1       = authorize.Resource{Kind: kernel.ResourceMessage, ID: m1, SpaceID: s1, ChannelID: c1, ThreadID: t1}
	resAgent    = authorize.Resource{Kind: kernel.ResourceAgent, ID: ag1}
	resGrants   = authorize.Resource{Kind: kernel.ResourceGrant}
)

func principalRes(id uuid.UUID) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourcePrincipal, ID: id}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		ok   = domain.OutcomeAllowed
		nf   = domain.OutcomeNotFound
		forb = domain.OutcomeForbidden
		pend = domain.OutcomeDevicePending
	)
	ownerScope := scopeOf(alex, grant(alex, kernel.ResourceInstance, inst, authz.RoleOwner))
	none := scopeOf(sam)
	tests := []struct {
		name   string
		actor  actor.Actor
		scope  authz.Scope
		action kernel.Action
		res    authorize.Resource
		want   domain.Outcome
	}{
		// The baseline: every principal reads the instance, principals and agents, catches up.
		{"no grants: instance.read", person(sam), none, kernel.ActionInstanceRead, resInstance, ok},
		{"no grants: catch up", person(sam), none, kernel.ActionEventsCatchUp, resInstance, ok},
		{"no grants: snapshot", person(sam), none, kernel.ActionSyncSnapshotRead, resInstance, ok},
		{"no grants: read a principal", person(sam), none, kernel.ActionPrincipalRead, principalRes(robin), ok},
		{"no grants: read oneself", person(sam), none, kernel.ActionPrincipalRead, principalRes(sam), ok},
		{"no grants: list agents", person(sam), none, kernel.ActionAgentRead, resInstance, ok},
		{"no grants: read an agent", person(sam), none, kernel.ActionAgentRead, resAgent, ok},
		{"no grants: list spaces", person(sam), none, kernel.ActionSpaceRead, resInstance, ok},
		{"no grants: direct message", person(sam), none, kernel.ActionChannelCreate, resInstance, ok},
		{"no grants: own settings", person(sam), none, kernel.ActionSettingWrite, principalRes(sam), ok},
		// Default deny, 404 for what cannot be read, 403 for what can.
		{"no grants: channel is invisible", person(sam), none, kernel.ActionChannelRead, resC1, nf},
		{"no grants: space is invisible", person(sam), none, kernel.ActionSpaceRead, resS1, nf},
		{"no grants: thread is invisible", person(sam), none, kernel.ActionThreadRead, resT1, nf},
		{"no grants: message is invisible", person(sam), none, kernel.ActionMessageUpdate, resM1, nf},
		{"no grants: a message event is invisible", person(sam), none, kernel.ActionThreadRead, resM1, nf},
		{"no grants: post is 404", person(sam), none, kernel.ActionMessageCreate, resT1, nf},
		{"no grants: instance.admin is 403", person(sam), none, kernel.ActionInstanceAdmin, resInstance, forb},
		{"no grants: create a space is 403", person(sam), none, kernel.ActionSpaceCreate, resInstance, forb},
		{"no grants: create an agent is 403", person(sam), none, kernel.ActionAgentCreate, resInstance, forb},
		{"no grants: principal.admin is 403", person(sam), none, kernel.ActionPrincipalAdmin, principalRes(robin), forb},
		{"no grants: another's settings is 403", person(sam), none, kernel.ActionSettingWrite, principalRes(robin), forb},
		{"no grants: grant collection is 403", person(sam), none, kernel.ActionGrantAdmin, resGrants, forb},
		{"no grants: instance grants are 403", person(sam), none, kernel.ActionGrantAdmin, resInstance, forb},
		// Owner: everything.
		{"owner: instance.admin", person(alex), ownerScope, kernel.ActionInstanceAdmin, resInstance, ok},
		{"owner: post anywhere", person(alex), ownerScope, kernel.ActionMessageCreate, resT1, ok},
		{"owner: a direct message of others", person(alex), ownerScope, kernel.ActionChannelRead, resD1, ok},
		{"owner: another's settings", person(alex), ownerScope, kernel.ActionSettingWrite, principalRes(robin), ok},
		{"owner: grant collection", person(alex), ownerScope, kernel.ActionGrantAdmin, resGrants, ok},
		{"owner: no rule for the pair", person(alex), ownerScope, kernel.ActionChannelRead, resAgent, forb},
		// Instance grants apply to every space and channel.
		{"instance viewer reads a channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleViewer)), kernel.ActionChannelRead, resC3, ok},
		{"instance viewer may not post", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleViewer)), kernel.ActionMessageCreate, resT1, forb},
		{"instance member posts", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleMember)), kernel.ActionMessageCreate, resT1, ok},
		{"instance member creates an agent", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleMember)), kernel.ActionAgentCreate, resInstance, ok},
		{"instance member may not create a space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleMember)), kernel.ActionSpaceCreate, resInstance, forb},
		{"instance admin creates a space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleAdmin)), kernel.ActionSpaceCreate, resInstance, ok},
		{"instance admin administers principals", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleAdmin)), kernel.ActionPrincipalAdmin, principalRes(robin), ok},
		{"instance admin archives a channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleAdmin)), kernel.ActionChannelArchive, resC2, ok},
		{"instance admin may not write another's settings", person(sam), scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleAdmin)), kernel.ActionSettingWrite, principalRes(robin), forb},
		// Space grants apply to every channel in the space, also channels the scope never saw.
		{"space viewer reads its channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleViewer)), kernel.ActionChannelRead, resC2, ok},
		{"space viewer reads a new channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleViewer)), kernel.ActionChannelRead,
			authorize.Resource{Kind: kernel.ResourceChannel, ID: uuid.New(), SpaceID: s1}, ok},
		{"space viewer does not see another space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleViewer)), kernel.ActionSpaceRead, resS2, nf},
		{"space viewer may not update the space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleViewer)), kernel.ActionSpaceUpdate, resS1, forb},
		{"space member creates a thread", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleMember)), kernel.ActionThreadCreate, resC1, ok},
		{"space member may not create a channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleMember)), kernel.ActionChannelCreate, resS1, forb},
		{"space admin creates a channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionChannelCreate, resS1, ok},
		{"space admin manages its grants", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionGrantAdmin, resS1, ok},
		{"space admin manages grants of its channels", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionGrantAdmin, resC2, ok},
		{"space admin uses the grant collection", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionGrantAdmin, resGrants, ok},
		{"space admin may not grant on the instance", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionGrantAdmin, resInstance, forb},
		{"space admin moderates messages", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleAdmin)), kernel.ActionMessageDelete, resC1, ok},
		// Channel grants apply to the channel, its threads and messages; the space is visible.
		{"channel viewer reads the thread", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionThreadRead, resT1, ok},
		{"channel viewer receives its message events (thread.read on the message)", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionThreadRead, resM1, ok},
		{"channel viewer may not keep a read state", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionReadStateWrite, resT1, forb},
		{"channel viewer may not keep a draft", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionDraftWrite, resC1, forb},
		{"channel viewer reads its own draft", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionDraftRead, resC1, ok},
		{"no draft is read where the channel is not", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionDraftRead, resC2, nf},
		{"channel viewer sees the space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionSpaceRead, resS1, ok},
		{"channel viewer may not update the space", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionSpaceUpdate, resS1, forb},
		{"channel viewer does not see a sibling channel", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionChannelRead, resC2, nf},
		{"channel member posts", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageCreate, resT1, ok},
		{"channel member edits (own) message", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageUpdate, resM1, ok},
		{"channel member does not moderate", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageUpdate, resC1, forb},
		{"channel member saves a draft", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionDraftWrite, resC1, ok},
		{"channel member may not manage grants", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionGrantAdmin, resC1, forb},
		{"dm participant reads the dm", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, d1, authz.RoleMember)), kernel.ActionChannelRead, resD1, ok},
		{"dm participant does not see another dm", person(robin), scopeOf(robin, grant(robin, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionChannelRead, resD1, nf},
		{"channel admin updates it", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleAdmin)), kernel.ActionChannelUpdate, resC1, ok},
		{"channel admin manages its grants", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleAdmin)), kernel.ActionGrantAdmin, resC1, ok},
		{"the highest of several grants counts", person(sam), scopeOf(sam, grant(sam, kernel.ResourceSpace, s1, authz.RoleViewer), grant(sam, kernel.ResourceChannel, c1, authz.RoleAdmin)), kernel.ActionChannelUpdate, resC1, ok},
		{"a thread without its channel is invisible", person(sam), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleAdmin)), kernel.ActionThreadRead, authorize.Resource{Kind: kernel.ResourceThread, ID: t1}, nf},
		// Devices.
		{"pending device: every action", actor.Actor{PrincipalID: alex, Kind: actor.KindPerson, DevicePending: true}, ownerScope, kernel.ActionInstanceRead, resInstance, pend},
		{"pending device: even invisible", actor.Actor{PrincipalID: sam, Kind: actor.KindPerson, DevicePending: true}, none, kernel.ActionChannelRead, resC1, pend},
		// Apps: a scope must cover the action and the grants must allow it; without the scope the
		// answer is the one without the grant.
		{"app without events:subscribe: 403 on catch-up", app(sam), none, kernel.ActionEventsCatchUp, resInstance, forb},
		{"app with events:subscribe catches up", app(sam, identity.ScopeEventsSubscribe), none, kernel.ActionEventsCatchUp, resInstance, ok},
		{"app with events:subscribe snapshot", app(sam, identity.ScopeEventsSubscribe), none, kernel.ActionSyncSnapshotRead, resInstance, ok},
		{"app without messages:read: channel 404 despite the grant", app(sam, identity.ScopeEventsSubscribe), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionChannelRead, resC1, nf},
		{"app with messages:read reads", app(sam, identity.ScopeMessagesRead), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionThreadRead, resT1, ok},
		{"app with messages:read but no grant: 404", app(sam, identity.ScopeMessagesRead), none, kernel.ActionChannelRead, resC1, nf},
		{"app with messages:read may not post", app(sam, identity.ScopeMessagesRead), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageCreate, resT1, forb},
		{"app with messages:write only: 404 (cannot read)", app(sam, identity.ScopeMessagesWrite), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageCreate, resT1, nf},
		{"app with both posts", app(sam, identity.ScopeMessagesRead, identity.ScopeMessagesWrite), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleMember)), kernel.ActionMessageCreate, resT1, ok},
		{"app with both but viewer grant: 403", app(sam, identity.ScopeMessagesRead, identity.ScopeMessagesWrite), scopeOf(sam, grant(sam, kernel.ResourceChannel, c1, authz.RoleViewer)), kernel.ActionMessageCreate, resT1, forb},
		{"app with agents:read lists agents", app(sam, identity.ScopeAgentsRead), none, kernel.ActionAgentRead, resInstance, ok},
		{"app without agents:read: 403", app(sam, identity.ScopeMessagesRead), none, kernel.ActionAgentRead, resAgent, forb},
		{"owner app is still bound by its scopes", app(alex, identity.ScopeMessagesRead), ownerScope, kernel.ActionInstanceAdmin, resInstance, forb},
		{"owner app reads with its scope", app(alex, identity.ScopeMessagesRead), ownerScope, kernel.ActionChannelRead, resD1, ok},
		{"app: no scope covers getMe", app(sam, identity.Scopes()...), none, kernel.ActionPrincipalRead, principalRes(sam), forb},
		{"scoped person token is bound too", actor.Actor{PrincipalID: sam, Kind: actor.KindPerson, Scopes: []string{identity.ScopeMessagesRead}}, none, kernel.ActionEventsCatchUp, resInstance, forb},
		{"unknown scope covers nothing", app(sam, "admin"), none, kernel.ActionInstanceRead, resInstance, forb},
		// Unknown pairs and kinds.
		{"unknown kind is invisible", person(alex), ownerScope, kernel.ActionChannelRead, authorize.Resource{Kind: "widget", ID: c1}, nf},
		{"unknown action is forbidden", person(alex), ownerScope, kernel.Action("channel.explode"), resC1, forb},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.Decide(tc.actor, tc.scope, tc.action, tc.res)
			if got.Outcome != tc.want {
				t.Fatalf("Decide(%s on %s) = %s (%s), want %s", tc.action, tc.res, got.Outcome, got.Cause, tc.want)
			}
			if got.Cause == "" {
				t.Errorf("Decide(%s on %s) has no cause", tc.action, tc.res)
			}
		})
	}
}

func TestDecisionErr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		outcome domain.Outcome
		want    error
	}{
		{domain.OutcomeAllowed, nil},
		{domain.OutcomeDevicePending, problem.ErrDevicePending},
		{domain.OutcomeNotFound, problem.ErrNotFound},
		{domain.OutcomeForbidden, problem.ErrForbidden},
		{domain.OutcomeUnauthenticated, problem.ErrUnauthenticated},
	}
	for _, tc := range tests {
		t.Run(string(tc.outcome), func(t *testing.T) {
			t.Parallel()
			err := domain.Decision{Outcome: tc.outcome, Cause: "x"}.Err()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Err() = %v, want %v", err, tc.want)
			}
			// The body of a denial must be exactly that of the kind: no cause, no ids.
			p := problem.From(t.Context(), err)
			q := problem.From(t.Context(), tc.want)
			if p.Detail != q.Detail {
				t.Errorf("detail %q, want the kind's own %q", p.Detail, q.Detail)
			}
		})
	}
}

func TestPolicyCoversEveryAction(t *testing.T) {
	t.Parallel()
	seen := map[kernel.Action]bool{}
	for _, r := range domain.Policy() {
		seen[r.Action] = true
		if !r.Action.Valid() || !r.Kind.Valid() {
			t.Errorf("rule %+v names an unknown action or kind", r)
		}
		if r.Need == domain.NeedRole && !r.Min.Valid() {
			t.Errorf("rule %+v needs a role but names none", r)
		}
		if r.Note == "" {
			t.Errorf("rule %s on %s has no note", r.Action, r.Kind)
		}
		got, ok := domain.RuleFor(r.Action, r.Kind)
		if !ok || got != r {
			t.Errorf("RuleFor(%s, %s) = %+v, %v; want %+v", r.Action, r.Kind, got, ok, r)
		}
	}
	for _, a := range kernel.Actions() {
		if !seen[a] {
			t.Errorf("no rule for action %s", a)
		}
	}
}

func TestScopesMapToActions(t *testing.T) {
	t.Parallel()
	want := map[string][]kernel.Action{
		identity.ScopeEventsSubscribe: {kernel.ActionEventsCatchUp, kernel.ActionSyncSnapshotRead},
		identity.ScopeMessagesRead:    {kernel.ActionSpaceRead, kernel.ActionChannelRead, kernel.ActionThreadRead},
		identity.ScopeMessagesWrite:   {kernel.ActionThreadCreate, kernel.ActionMessageCreate, kernel.ActionMessageUpdate, kernel.ActionMessageDelete, kernel.ActionReactionWrite},
		identity.ScopeAgentsRead:      {kernel.ActionAgentRead},
	}
	for _, s := range identity.Scopes() {
		if got := domain.ScopeActions(s); !slices.Equal(got, want[s]) {
			t.Errorf("ScopeActions(%s) = %v, want %v (spec 04)", s, got, want[s])
		}
	}
	if got := domain.ScopeActions("admin"); len(got) != 0 {
		t.Errorf("ScopeActions(unknown) = %v, want none", got)
	}
	if len(want) != len(identity.Scopes()) {
		t.Errorf("identity lists %d scopes, the mapping %d", len(identity.Scopes()), len(want))
	}
}

func TestRoleOn(t *testing.T) {
	t.Parallel()
	s := scopeOf(sam,
		grant(sam, kernel.ResourceInstance, inst, authz.RoleViewer),
		grant(sam, kernel.ResourceSpace, s1, authz.RoleMember),
		grant(sam, kernel.ResourceChannel, c2, authz.RoleAdmin))
	tests := []struct {
		name string
		res  authorize.Resource
		want authz.Role
	}{
		{"instance", resInstance, authz.RoleViewer},
		{"space with a grant", resS1, authz.RoleMember},
		{"space without", resS2, authz.RoleViewer},
		{"channel inherits its space", resC1, authz.RoleMember},
		{"channel grant wins when higher", resC2, authz.RoleAdmin},
		{"thread inherits its channel", resT1, authz.RoleMember},
		{"message inherits its thread's channel", resM1, authz.RoleMember},
		{"dm gets the instance role", resD1, authz.RoleViewer},
		{"principal gets the instance role", principalRes(robin), authz.RoleViewer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.RoleOn(s, tc.res); got != tc.want {
				t.Fatalf("RoleOn(%s) = %q, want %q", tc.res, got, tc.want)
			}
		})
	}
}

// TestDirectMessageOnlyByItsGrant: a resource marked Direct (a direct message, its threads and
// messages) takes the role of the grant on its channel only: no instance role reaches it, and
// an owner who does not take part cannot see it (404), while a participant, owner or not, acts
// as its grant (and an owner as an owner) there.
func TestDirectMessageOnlyByItsGrant(t *testing.T) {
	t.Parallel()
	dmChannel := authorize.Resource{Kind: kernel.ResourceChannel, ID: d1, ChannelID: d1, Direct: true}
	dmThread := authorize.Resource{Kind: kernel.ResourceThread, ID: t1, ChannelID: d1, ThreadID: t1, Direct: true}
	dmMessage := authorize.Resource{Kind: kernel.ResourceMessage, ID: m1, ChannelID: d1, ThreadID: t1, Direct: true}
	owner := scopeOf(alex, grant(alex, kernel.ResourceInstance, inst, authz.RoleOwner))
	admin := scopeOf(robin, grant(robin, kernel.ResourceInstance, inst, authz.RoleAdmin))
	participant := scopeOf(sam, grant(sam, kernel.ResourceInstance, inst, authz.RoleAdmin), grant(sam, kernel.ResourceChannel, d1, authz.RoleMember))
	ownerInIt := scopeOf(alex, grant(alex, kernel.ResourceInstance, inst, authz.RoleOwner), grant(alex, kernel.ResourceChannel, d1, authz.RoleMember))
	for _, res := range []authorize.Resource{dmChannel, dmThread, dmMessage} {
		for _, tc := range []struct {
			name   string
			who    uuid.UUID
			s      authz.Scope
			role   authz.Role
			action kernel.Action
			want   domain.Outcome
		}{
			{"owner not in it", alex, owner, "", kernel.ActionThreadRead, domain.OutcomeNotFound},
			{"instance admin not in it", robin, admin, "", kernel.ActionThreadRead, domain.OutcomeNotFound},
			{"participant reads", sam, participant, authz.RoleMember, kernel.ActionThreadRead, domain.OutcomeAllowed},
			{"participant who is an instance admin administers nothing", sam, participant, authz.RoleMember, kernel.ActionGrantAdmin, domain.OutcomeForbidden},
			{"owner in it", alex, ownerInIt, authz.RoleMember, kernel.ActionThreadRead, domain.OutcomeAllowed},
		} {
			if got := domain.RoleOn(tc.s, res); got != tc.role {
				t.Errorf("%s on %s: RoleOn = %q, want %q", tc.name, res, got, tc.role)
			}
			if tc.action == kernel.ActionGrantAdmin && res.Kind != kernel.ResourceChannel {
				continue
			}
			if got := domain.Decide(person(tc.who), tc.s, tc.action, res); got.Outcome != tc.want {
				t.Errorf("%s: %s on %s = %s, want %s", tc.name, tc.action, res, got.Outcome, tc.want)
			}
		}
	}
}
