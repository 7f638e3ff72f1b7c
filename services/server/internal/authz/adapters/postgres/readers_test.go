package postgres_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
)

// TestChannelReaders checks who can read a channel by grant: the instance's, the space's and
// the channel's grant holders, each once with the highest role of those grants, in principal
// id order, paged; grants on other spaces and channels do not count; a direct message (no
// space) counts its channel's grants alone, no instance grant.
func TestChannelReaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	ids := make([]uuid.UUID, 6)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	owner, viaSpace, both, viaChannel, elsewhere, dmOnly := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]
	space, channel, otherSpace, otherChannel, dm := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, g := range []authz.Grant{
		newGrant(owner, kernel.ResourceInstance, e.instanceID, authz.RoleOwner),
		newGrant(viaSpace, kernel.ResourceSpace, space, authz.RoleViewer),
		newGrant(both, kernel.ResourceSpace, space, authz.RoleAdmin),
		newGrant(both, kernel.ResourceChannel, channel, authz.RoleMember),
		newGrant(viaChannel, kernel.ResourceChannel, channel, authz.RoleMember),
		newGrant(viaChannel, kernel.ResourceInstance, e.instanceID, authz.RoleViewer),
		newGrant(elsewhere, kernel.ResourceSpace, otherSpace, authz.RoleAdmin),
		newGrant(elsewhere, kernel.ResourceChannel, otherChannel, authz.RoleAdmin),
		newGrant(dmOnly, kernel.ResourceChannel, dm, authz.RoleMember),
		newGrant(viaSpace, kernel.ResourceChannel, dm, authz.RoleMember),
	} {
		if _, err := e.store.Insert(ctx, g); err != nil {
			t.Fatalf("Insert: %v", err)
		}
	}
	want := []authz.Reader{
		{PrincipalID: owner, Role: authz.RoleOwner},
		{PrincipalID: viaSpace, Role: authz.RoleViewer},
		{PrincipalID: both, Role: authz.RoleAdmin},
		{PrincipalID: viaChannel, Role: authz.RoleMember},
	}
	all, err := e.store.ChannelReaders(ctx, space, channel, uuid.Nil, 100)
	if err != nil || !slices.Equal(all, want) {
		t.Fatalf("ChannelReaders = %v, %v; want %v", all, err, want)
	}
	var paged []authz.Reader
	after := uuid.Nil
	for range len(want) + 1 {
		page, err := e.store.ChannelReaders(ctx, space, channel, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1].PrincipalID
	}
	if !slices.Equal(paged, want) {
		t.Errorf("pages of one = %v, want %v", paged, want)
	}
	dmReaders, err := e.store.ChannelReaders(ctx, uuid.Nil, dm, uuid.Nil, 100)
	wantDM := []authz.Reader{{PrincipalID: viaSpace, Role: authz.RoleMember}, {PrincipalID: dmOnly, Role: authz.RoleMember}}
	if err != nil || !slices.Equal(dmReaders, wantDM) {
		t.Errorf("direct message = %v, %v; want %v", dmReaders, err, wantDM)
	}
	none, err := e.store.ChannelReaders(ctx, uuid.Nil, uuid.New(), uuid.Nil, 100)
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("unknown direct message = %#v, %v; want []", none, err)
	}
}
