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

// channel creates a channel in the space as alex and returns it.
func (e *env) channel(t *testing.T, space uuid.UUID, name string) chat.Channel {
	t.Helper()
	ch, err := e.svc.Channels().Create(as(t, alex), chat.ChannelInput{SpaceID: space, Name: name})
	if err != nil {
		t.Fatalf("create channel %s: %v", name, err)
	}
	return ch
}

func TestCreateChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	seen := len(e.appender.events())
	e.authz.Reset()
	ch, err := e.svc.Channels().Create(as(t, sam), chat.ChannelInput{SpaceID: sp.ID, Name: " general ", Topic: "Questions"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if ch.SpaceID != sp.ID || ch.Kind != chat.ChannelStandard || ch.Name != "general" || ch.Topic != "Questions" || ch.Version != 1 {
		t.Fatalf("channel = %+v", ch)
	}
	if got := e.authz.Calls(); len(got) != 1 || got[0].Action != kernel.ActionChannelCreate ||
		got[0].Res != (authorize.Resource{Kind: kernel.ResourceSpace, ID: sp.ID, SpaceID: sp.ID}) {
		t.Fatalf("authorized %+v, want channel.create on the space", got)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "channel.created", actor: sam, space: sp.ID, channel: ch.ID, kind: kernel.ResourceChannel, resource: ch.ID})
	if p := payload(evs[0]); p["kind"] != "standard" || p["space_id"] != sp.ID.String() || p["name"] != "general" || p["topic"] != "Questions" {
		t.Errorf("payload = %v", p)
	}
	if _, ok := payload(evs[0])["participant_ids"]; ok {
		t.Errorf("a standard channel's payload has participant_ids")
	}

	archived := e.space(t, "Old")
	if _, err := e.svc.Spaces().Archive(as(t, alex), archived.ID); err != nil {
		t.Fatal(err)
	}
	hidden := e.space(t, "Hidden")
	e.authz.denyOn(kernel.ActionChannelCreate, hidden.ID, problem.ErrNotFound)
	seen = len(e.appender.events())
	before := e.store.sizes()
	tests := []struct {
		name   string
		in     chat.ChannelInput
		kind   error
		fields []string
	}{
		{"name taken in any case", chat.ChannelInput{SpaceID: sp.ID, Name: "General"}, problem.ErrConflict, nil},
		{"invalid", chat.ChannelInput{SpaceID: sp.ID, Name: "", Topic: strings.Repeat("t", domain.MaxTopicLen+1)}, problem.ErrValidation, []string{"name", "topic"}},
		{"archived space", chat.ChannelInput{SpaceID: archived.ID, Name: "general"}, problem.ErrConflict, nil},
		{"unknown space", chat.ChannelInput{SpaceID: uuid.New(), Name: "general"}, problem.ErrNotFound, nil},
		{"invisible space", chat.ChannelInput{SpaceID: hidden.ID, Name: "general"}, problem.ErrNotFound, nil},
	}
	for _, tc := range tests {
		_, err := e.svc.Channels().Create(as(t, sam), tc.in)
		wantProblem(t, err, tc.kind, tc.fields...)
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v, want none", tc.name, got)
		}
		if got := e.store.sizes(); got != before {
			t.Errorf("%s: store %v, want %v", tc.name, got, before)
		}
	}
	if _, err := e.svc.Channels().Create(as(t, sam), chat.ChannelInput{SpaceID: archived.ID, Name: "general"}); !errorsIs(err, domain.ErrSpaceArchived) {
		t.Errorf("archived space = %v, want ErrSpaceArchived", err)
	}
	e.appender.fail(errDB)
	if _, err := e.svc.Channels().Create(as(t, sam), chat.ChannelInput{SpaceID: sp.ID, Name: "random"}); !errorsIs(err, errDB) {
		t.Errorf("failing appender = %v", err)
	}
	if got := e.store.sizes(); got != before {
		t.Errorf("a failed append left %v, want %v", got, before)
	}
	if _, err := e.svc.Channels().Create(t.Context(), chat.ChannelInput{SpaceID: sp.ID, Name: "random"}); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("Create without actor = %v", err)
	}

	// An archived channel frees its name.
	if _, err := e.svc.Channels().Archive(as(t, alex), ch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Channels().Create(as(t, sam), chat.ChannelInput{SpaceID: sp.ID, Name: "general"}); err != nil {
		t.Fatalf("name of an archived channel: %v", err)
	}
}

func TestCreateDirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := 0
	ch, created, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin, alex, robin})
	if err != nil || !created {
		t.Fatalf("CreateDirect = %v, %v", created, err)
	}
	want := []uuid.UUID{alex, sam, robin}
	if ch.Kind != chat.ChannelDM || ch.SpaceID != uuid.Nil || ch.Name != "" || !slices.Equal(ch.ParticipantIDs, want) {
		t.Fatalf("channel = %+v", ch)
	}
	if got := e.authz.Calls(); len(got) != 1 || got[0].Action != kernel.ActionChannelCreate || got[0].Res != authorize.Instance() {
		t.Fatalf("authorized %+v, want channel.create on the instance", got)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "channel.created", actor: sam, channel: ch.ID, kind: kernel.ResourceChannel, resource: ch.ID})
	p := payload(evs[0])
	if p["kind"] != "dm" || p["participant_ids"] == nil || len(p["participant_ids"].([]any)) != 3 {
		t.Errorf("payload = %v", p)
	}
	for _, absent := range []string{"space_id", "name", "topic"} {
		if _, ok := p[absent]; ok {
			t.Errorf("payload has %s: %v", absent, p)
		}
	}
	var granted []uuid.UUID
	for _, g := range e.grants.grants() {
		if g.ResourceKind != kernel.ResourceChannel || g.ResourceID != ch.ID || g.Role != authz.RoleMember {
			t.Errorf("grant %+v, want member on the channel", g)
		}
		granted = append(granted, g.PrincipalID)
	}
	if !slices.Equal(granted, want) {
		t.Errorf("granted %v, want every participant %v", granted, want)
	}

	// The same set, in another order and by another participant: the same channel, nothing
	// written.
	again, created, err := e.svc.Channels().CreateDirect(as(t, robin), []uuid.UUID{sam, alex})
	if err != nil || created || again.ID != ch.ID {
		t.Fatalf("CreateDirect again = %+v, %v, %v; want the existing channel", again, created, err)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("existing direct message appended %v", got)
	}
	if n := len(e.grants.grants()); n != 3 {
		t.Fatalf("grants = %d, want still 3", n)
	}

	before := e.store.sizes()
	tests := []struct {
		name string
		ids  []uuid.UUID
		kind error
	}{
		{"empty", nil, problem.ErrValidation},
		{"the actor alone", []uuid.UUID{sam}, problem.ErrValidation},
		{"too many", []uuid.UUID{alex, robin, uuid.New()}, problem.ErrValidation},
		{"unknown principal", []uuid.UUID{uuid.New()}, problem.ErrValidation},
	}
	for _, tc := range tests {
		_, _, err := e.svc.Channels().CreateDirect(as(t, sam), tc.ids)
		wantProblem(t, err, tc.kind, "participant_ids")
		if got := e.newEvents(&seen); len(got) != 0 {
			t.Errorf("%s: events %v", tc.name, got)
		}
	}
	e.grants.fail = errDB
	if _, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin}); !errorsIs(err, errDB) {
		t.Fatalf("failing grant = %v", err)
	}
	e.grants.fail = nil
	e.appender.fail(errDB)
	if _, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin}); !errorsIs(err, errDB) {
		t.Fatalf("failing append = %v", err)
	}
	e.store.fail("InsertDirect", errDB)
	if _, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin}); !errorsIs(err, errDB) {
		t.Fatalf("failing store = %v", err)
	}
	e.dir.fail = errDB
	if _, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin}); !errorsIs(err, errDB) {
		t.Fatalf("failing directory = %v", err)
	}
	e.dir.fail = nil
	if got := e.store.sizes(); got != before {
		t.Errorf("failures left %v, want %v", got, before)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Errorf("failures appended %v", got)
	}
	e.authz.denyOn(kernel.ActionChannelCreate, uuid.Nil, problem.ErrDevicePending)
	if _, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin}); !errorsIs(err, problem.ErrDevicePending) {
		t.Fatalf("denied = %v", err)
	}
	e.authz.denyOn(kernel.ActionChannelCreate, uuid.Nil, nil)
	if _, _, err := e.svc.Channels().CreateDirect(t.Context(), []uuid.UUID{robin}); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("without actor = %v", err)
	}

	got, err := e.svc.Channels().Get(t.Context(), ch.ID)
	if err != nil || got.ID != ch.ID || !slices.Equal(got.ParticipantIDs, want) {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := e.svc.Channels().Get(t.Context(), uuid.New()); !errorsIs(err, problem.ErrNotFound) {
		t.Fatalf("Get unknown = %v", err)
	}
}

func TestListChannels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp, other := e.space(t, "Support"), e.space(t, "Marketing")
	general, random, secret, old := e.channel(t, sp.ID, "general"), e.channel(t, sp.ID, "random"), e.channel(t, sp.ID, "secret"), e.channel(t, sp.ID, "old")
	news := e.channel(t, other.ID, "news")
	if _, err := e.svc.Channels().Archive(as(t, alex), old.ID); err != nil {
		t.Fatal(err)
	}
	dm, _, err := e.svc.Channels().CreateDirect(as(t, sam), []uuid.UUID{robin})
	if err != nil {
		t.Fatal(err)
	}
	othersDM, _, err := e.svc.Channels().CreateDirect(as(t, alex), []uuid.UUID{robin})
	if err != nil {
		t.Fatal(err)
	}
	e.authz.denyOn(kernel.ActionChannelRead, secret.ID, problem.ErrNotFound)
	for _, a := range []kernel.Action{kernel.ActionChannelArchive, kernel.ActionChannelUpdate, kernel.ActionGrantAdmin} {
		e.authz.denyOn(a, general.ID, problem.ErrForbidden)
		e.authz.denyOn(a, dm.ID, problem.ErrForbidden)
	}
	e.authz.denyOn(kernel.ActionMessageCreate, random.ID, problem.ErrForbidden)
	e.authz.denyOn(kernel.ActionReadStateWrite, random.ID, problem.ErrForbidden)
	e.authz.levels[general.ID] = authz.RoleMember
	e.authz.levels[random.ID] = authz.RoleViewer
	e.authz.levels[dm.ID] = authz.RoleMember
	e.authz.Reset()

	views, err := e.svc.Channels().ListInSpace(as(t, sam), sp.ID)
	if err != nil {
		t.Fatalf("ListInSpace: %v", err)
	}
	if len(views) != 2 || views[0].Channel.ID != general.ID || views[1].Channel.ID != random.ID {
		t.Fatalf("ListInSpace = %+v, want general and random", views)
	}
	member := []kernel.Action{kernel.ActionDraftWrite, kernel.ActionMessageCreate, kernel.ActionReadStateWrite, kernel.ActionThreadCreate}
	if v := views[0]; v.Level != authz.RoleMember || !slices.Equal(v.Capabilities, member) {
		t.Errorf("general = %+v", v)
	}
	if v := views[1]; v.Level != authz.RoleViewer || slices.Contains(v.Capabilities, kernel.ActionMessageCreate) || slices.Contains(v.Capabilities, kernel.ActionReadStateWrite) {
		t.Errorf("random = %+v", v)
	}
	calls := e.authz.Calls()
	if calls[0].Action != kernel.ActionSpaceRead || calls[0].Res != (authorize.Resource{Kind: kernel.ResourceSpace, ID: sp.ID, SpaceID: sp.ID}) || calls[0].Filter {
		t.Errorf("first decision %+v, want space.read on the space", calls[0])
	}
	for _, c := range calls[1:] {
		if !c.Filter {
			t.Errorf("item decision %+v not in filter mode", c)
		}
		switch c.Action {
		case kernel.ActionMessageCreate, kernel.ActionReadStateWrite:
			if c.Res.Kind != kernel.ResourceThread || c.Res.ID != uuid.Nil || c.Res.SpaceID != sp.ID {
				t.Errorf("%s asked on %+v, want a thread of the channel", c.Action, c.Res)
			}
		default:
			if c.Res.Kind != kernel.ResourceChannel || c.Res.ChannelID != c.Res.ID || c.Res.SpaceID != sp.ID {
				t.Errorf("%s asked on %+v, want the channel with its space", c.Action, c.Res)
			}
		}
	}

	e.authz.scope = authz.NewScope(sam, 1, []authz.Grant{
		{PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: sp.ID, Role: authz.RoleMember},
		{PrincipalID: sam, ResourceKind: kernel.ResourceChannel, ResourceID: dm.ID, Role: authz.RoleMember},
	}, nil)
	visible, err := e.svc.Channels().ListVisible(as(t, sam))
	if err != nil {
		t.Fatalf("ListVisible: %v", err)
	}
	var got []uuid.UUID
	for _, v := range visible {
		got = append(got, v.Channel.ID)
	}
	if want := []uuid.UUID{dm.ID, general.ID, random.ID}; !slices.Equal(got, want) {
		t.Fatalf("ListVisible = %v, want the direct message, general and random (not %s, %s, %s)", got, secret.ID, news.ID, othersDM.ID)
	}
	if v := visible[0]; v.Level != authz.RoleMember || !slices.Equal(v.Capabilities, member) {
		t.Errorf("direct message view = %+v", v)
	}

	if _, err := e.svc.Channels().ListInSpace(as(t, sam), uuid.New()); !errorsIs(err, problem.ErrNotFound) {
		t.Errorf("ListInSpace unknown = %v", err)
	}
	e.authz.denyOn(kernel.ActionSpaceRead, other.ID, problem.ErrNotFound)
	if _, err := e.svc.Channels().ListInSpace(as(t, sam), other.ID); !errorsIs(err, problem.ErrNotFound) {
		t.Errorf("ListInSpace invisible = %v", err)
	}
	e.authz.denyOn(kernel.ActionChannelRead, general.ID, errDB)
	if _, err := e.svc.Channels().ListInSpace(as(t, sam), sp.ID); !errorsIs(err, errDB) {
		t.Errorf("failing decision = %v", err)
	}
	if _, err := e.svc.Channels().ListVisible(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("failing decision = %v", err)
	}
	e.authz.denyOn(kernel.ActionChannelRead, general.ID, nil)
	e.authz.denyOn(kernel.ActionDraftWrite, general.ID, errDB)
	if _, err := e.svc.Channels().ListInSpace(as(t, sam), sp.ID); !errorsIs(err, errDB) {
		t.Errorf("failing capability = %v", err)
	}
	e.store.fail("ChannelsInSpace", errDB)
	if _, err := e.svc.Channels().ListInSpace(as(t, sam), sp.ID); !errorsIs(err, errDB) {
		t.Errorf("failing store = %v", err)
	}
	e.store.fail("Channels", errDB)
	if _, err := e.svc.Channels().ListVisible(as(t, sam)); !errorsIs(err, errDB) {
		t.Errorf("failing store = %v", err)
	}
	if _, err := e.svc.Channels().ListVisible(t.Context()); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("ListVisible without actor = %v", err)
	}
	if _, err := e.svc.Channels().ListInSpace(t.Context(), sp.ID); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Errorf("ListInSpace without actor = %v", err)
	}
	e.authz.denyOn(kernel.ActionSpaceRead, sp.ID, nil)
	e.authz.fail = nil
}

func TestListChannelsForActorFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	e.authz.fail = errDB
	if _, err := e.svc.Channels().ListInSpace(as(t, sam), sp.ID); !errorsIs(err, errDB) {
		t.Errorf("ListInSpace = %v", err)
	}
}

func TestArchiveChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	seen := len(e.appender.events())
	e.authz.Reset()
	e.clock.Advance(time2h)
	got, err := e.svc.Channels().Archive(as(t, sam), ch.ID)
	if err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if !got.ArchivedAt.Equal(start.Add(time2h)) || got.Version != 2 {
		t.Fatalf("archived = %+v", got)
	}
	if calls := e.authz.Calls(); len(calls) != 1 || calls[0].Action != kernel.ActionChannelArchive ||
		calls[0].Res != (authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID}) {
		t.Fatalf("authorized %+v", calls)
	}
	evs := e.newEvents(&seen)
	wantEvents(t, evs, placed{typ: "channel.archived", actor: sam, space: sp.ID, channel: ch.ID, kind: kernel.ResourceChannel, resource: ch.ID})
	if p := payload(evs[0]); p["space_id"] != sp.ID.String() || p["version"] != 2.0 {
		t.Errorf("payload = %v", p)
	}
	if again, err := e.svc.Channels().Archive(as(t, sam), ch.ID); err != nil || again.Version != 2 {
		t.Fatalf("second Archive = %+v, %v", again, err)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("second Archive appended %v", got)
	}

	other := e.channel(t, sp.ID, "random")
	seen = len(e.appender.events())
	e.authz.denyOn(kernel.ActionChannelArchive, other.ID, problem.ErrForbidden)
	if _, err := e.svc.Channels().Archive(as(t, sam), other.ID); !errorsIs(err, problem.ErrForbidden) {
		t.Fatalf("denied = %v", err)
	}
	e.authz.denyOn(kernel.ActionChannelArchive, other.ID, nil)
	if _, err := e.svc.Channels().Archive(as(t, sam), uuid.New()); !errorsIs(err, problem.ErrNotFound) {
		t.Fatalf("unknown = %v", err)
	}
	e.store.fail("UpdateChannel", errDB)
	if _, err := e.svc.Channels().Archive(as(t, sam), other.ID); !errorsIs(err, errDB) {
		t.Fatalf("failing store = %v", err)
	}
	e.appender.fail(errDB)
	if _, err := e.svc.Channels().Archive(as(t, sam), other.ID); !errorsIs(err, errDB) {
		t.Fatalf("failing append = %v", err)
	}
	if _, err := e.svc.Channels().Archive(t.Context(), other.ID); !errorsIs(err, problem.ErrUnauthenticated) {
		t.Fatalf("without actor = %v", err)
	}
	if c, _ := e.svc.Channels().Get(t.Context(), other.ID); !c.ArchivedAt.IsZero() {
		t.Fatalf("failed archives left %+v", c)
	}
	if got := e.newEvents(&seen); len(got) != 0 {
		t.Fatalf("failed archives appended %v", got)
	}
}
