package authz_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role           authz.Role
		rank           int
		onInstance     bool
		onSpaceChannel bool
	}{
		{"", 0, false, false},
		{authz.RoleViewer, 1, true, true},
		{authz.RoleMember, 2, true, true},
		{authz.RoleAdmin, 3, true, true},
		{authz.RoleOwner, 4, true, false},
		{"superuser", 0, false, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.role), func(t *testing.T) {
			t.Parallel()
			if got := tc.role.Rank(); got != tc.rank {
				t.Errorf("Rank = %d, want %d", got, tc.rank)
			}
			if got := tc.role.ValidOn(kernel.ResourceInstance); got != tc.onInstance {
				t.Errorf("ValidOn(instance) = %v, want %v", got, tc.onInstance)
			}
			for _, k := range []kernel.ResourceKind{kernel.ResourceSpace, kernel.ResourceChannel} {
				if got := tc.role.ValidOn(k); got != tc.onSpaceChannel {
					t.Errorf("ValidOn(%s) = %v, want %v", k, got, tc.onSpaceChannel)
				}
			}
			if tc.role.ValidOn(kernel.ResourceThread) {
				t.Error("a grant on a thread must not be valid")
			}
		})
	}
	if !authz.RoleAdmin.AtLeast(authz.RoleMember) || authz.RoleViewer.AtLeast(authz.RoleMember) || !authz.Role("").AtLeast("") {
		t.Error("AtLeast does not order the roles")
	}
}

func TestNewScope(t *testing.T) {
	t.Parallel()
	var (
		sam, robin     = uuid.New(), uuid.New()
		inst           = uuid.New()
		s1, s2, s3     = uuid.New(), uuid.New(), uuid.New()
		c1, c2, c3, dm = uuid.New(), uuid.New(), uuid.New(), uuid.New()
	)
	g := func(p uuid.UUID, k kernel.ResourceKind, id uuid.UUID, r authz.Role) authz.Grant {
		return authz.Grant{ID: uuid.New(), PrincipalID: p, ResourceKind: k, ResourceID: id, Role: r}
	}
	grants := []authz.Grant{
		g(sam, kernel.ResourceSpace, s1, authz.RoleViewer),
		g(sam, kernel.ResourceChannel, c1, authz.RoleAdmin),  // in s1
		g(sam, kernel.ResourceChannel, c2, authz.RoleMember), // in s2: makes s2 visible, not fully
		g(sam, kernel.ResourceChannel, dm, authz.RoleMember), // a direct message
		g(robin, kernel.ResourceSpace, s3, authz.RoleAdmin),  // someone else's
		g(sam, kernel.ResourceSpace, s3, authz.RoleOwner),    // invalid: ignored
	}
	s := authz.NewScope(sam, 42, grants, map[uuid.UUID]uuid.UUID{c1: s1, c2: s2, c3: s3})
	if s.PrincipalID() != sam || s.PermissionVersion() != 42 {
		t.Fatalf("principal %s version %d", s.PrincipalID(), s.PermissionVersion())
	}
	if s.IsOwner() || s.InstanceWide() || s.InstanceRole() != "" {
		t.Errorf("no instance grant, got owner %v wide %v role %q", s.IsOwner(), s.InstanceWide(), s.InstanceRole())
	}
	sorted := func(ids ...uuid.UUID) []uuid.UUID {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		return ids
	}
	if got, want := s.VisibleChannelIDs(), sorted(c1, c2, dm); !slices.Equal(got, want) {
		t.Errorf("visible channels %v, want %v", got, want)
	}
	if got, want := s.FullyVisibleSpaceIDs(), sorted(s1); !slices.Equal(got, want) {
		t.Errorf("fully visible spaces %v, want %v", got, want)
	}
	if got, want := s.VisibleSpaceIDs(), sorted(s1, s2); !slices.Equal(got, want) {
		t.Errorf("visible spaces %v, want %v", got, want)
	}
	if sp, ok := s.SpaceOfGrantedChannel(c2); !ok || sp != s2 {
		t.Errorf("space of c2 = %s, %v", sp, ok)
	}
	if _, ok := s.SpaceOfGrantedChannel(dm); ok {
		t.Error("a direct message has no space")
	}
	if !s.ManagesGrants() || !s.HasSpaceGrants() {
		t.Error("channel admin with a space grant: ManagesGrants and HasSpaceGrants must hold")
	}
	if s.SpaceGrantRole(s3) != "" {
		t.Error("an owner grant on a space is invalid and must be ignored")
	}
	ids := s.VisibleChannelIDs()
	ids[0] = uuid.Nil
	if s.VisibleChannelIDs()[0] == uuid.Nil {
		t.Error("accessors must return copies")
	}

	owner := authz.NewScope(robin, 1, []authz.Grant{g(robin, kernel.ResourceInstance, inst, authz.RoleOwner), g(robin, kernel.ResourceInstance, inst, authz.RoleViewer)}, nil)
	if !owner.IsOwner() || !owner.InstanceWide() || !owner.ManagesGrants() {
		t.Error("an owner grant makes the principal owner, instance-wide and a grant manager")
	}
	viewer := authz.NewScope(robin, 1, []authz.Grant{g(robin, kernel.ResourceInstance, inst, authz.RoleViewer)}, nil)
	if viewer.IsOwner() || !viewer.InstanceWide() || viewer.ManagesGrants() {
		t.Error("an instance viewer is instance-wide, not owner, manages no grants")
	}
}
