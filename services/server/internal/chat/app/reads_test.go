package app_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// TestReadsAuthorizeTheLoadedRow checks that each read of one object loads the row first and
// then decides the read action on the resource with its ancestors, outside filter mode (a
// denial is audited), and that a denial or an unknown id is the same not_found.
func TestReadsAuthorizeTheLoadedRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, first := e.thread(t, ch, "Printer jammed")
	reads := []struct {
		name   string
		id     uuid.UUID
		action kernel.Action
		res    authorize.Resource
		read   func(id uuid.UUID) error
	}{
		{"space", sp.ID, kernel.ActionSpaceRead, authorize.Resource{Kind: kernel.ResourceSpace, ID: sp.ID, SpaceID: sp.ID},
			func(id uuid.UUID) error { _, err := e.svc.Spaces().Read(as(t, sam), id); return err }},
		{"channel", ch.ID, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID},
			func(id uuid.UUID) error { _, err := e.svc.Channels().Read(as(t, sam), id); return err }},
		{"members", ch.ID, kernel.ActionChannelRead, authorize.Resource{Kind: kernel.ResourceChannel, ID: ch.ID, SpaceID: sp.ID, ChannelID: ch.ID},
			func(id uuid.UUID) error { _, err := e.svc.Channels().Members(as(t, sam), id, uuid.Nil, 0); return err }},
		{"thread", th.ID, kernel.ActionThreadRead, authorize.Resource{Kind: kernel.ResourceThread, ID: th.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID},
			func(id uuid.UUID) error { _, err := e.svc.Threads().Read(as(t, sam), id); return err }},
		{"message", first.ID, kernel.ActionThreadRead, authorize.Resource{Kind: kernel.ResourceMessage, ID: first.ID, SpaceID: sp.ID, ChannelID: ch.ID, ThreadID: th.ID},
			func(id uuid.UUID) error { _, err := e.svc.Messages().Read(as(t, sam), id); return err }},
	}
	for _, r := range reads {
		e.authz.Reset()
		if err := r.read(r.id); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		calls := e.authz.Calls()
		if len(calls) == 0 || calls[0].Action != r.action || calls[0].Res != r.res || calls[0].Filter {
			t.Errorf("%s: first decision %+v, want %s on %+v outside filter mode", r.name, calls, r.action, r.res)
		}
		if err := r.read(uuid.New()); !errorsIs(err, problem.ErrNotFound) {
			t.Errorf("%s of an unknown id: %v, want not_found", r.name, err)
		}
		e.authz.denyOn(r.action, r.id, problem.ErrNotFound)
		if err := r.read(r.id); !errorsIs(err, problem.ErrNotFound) {
			t.Errorf("%s denied: %v, want not_found", r.name, err)
		}
		e.authz.denyOn(r.action, r.id, nil)
	}
}

// TestReadThread checks the thread view: its channel and space, its first message, the time
// of its newest message and the reply count; in a direct message no space.
func TestReadThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	th, first := e.thread(t, ch, "Printer jammed")
	v, err := e.svc.Threads().Read(as(t, sam), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Channel.ID != ch.ID || v.Space.ID != sp.ID || v.FirstMessage.ID != first.ID || !v.LastMessageAt.Equal(first.CreatedAt) || v.ReplyCount() != 0 {
		t.Errorf("one-message thread: %+v", v)
	}
	e.clock.Advance(5 * time.Minute)
	reply, err := e.svc.Messages().Post(as(t, alex), chat.MessageInput{ThreadID: th.ID, ContentMD: "On my way"})
	if err != nil {
		t.Fatal(err)
	}
	v, err = e.svc.Threads().Read(as(t, sam), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Thread.LastMessageSeq != 2 || v.ReplyCount() != 1 || !v.LastMessageAt.Equal(reply.CreatedAt) || v.FirstMessage.ID != first.ID {
		t.Errorf("after a reply: seq %d, replies %d, last at %v (want %v)", v.Thread.LastMessageSeq, v.ReplyCount(), v.LastMessageAt, reply.CreatedAt)
	}
	dm, _, err := e.svc.Channels().CreateDirect(as(t, alex), []uuid.UUID{sam})
	if err != nil {
		t.Fatal(err)
	}
	dth, _ := e.thread(t, dm, "Lunch?")
	v, err = e.svc.Threads().Read(as(t, sam), dth.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Space != (chat.Space{}) || v.Channel.Kind != chat.ChannelDM {
		t.Errorf("thread of a direct message: space %+v, channel %+v", v.Space, v.Channel)
	}
}

// TestMembers checks a channel's members: the readers authz lists for the channel and its
// space (none for a direct message), named through identity, in pages of at most
// chat.members_page_size with the last principal of a full page as the cursor.
func TestMembers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := e.space(t, "Support")
	ch := e.channel(t, sp.ID, "general")
	e.readers.list = []authz.Reader{{PrincipalID: alex, Role: authz.RoleOwner}, {PrincipalID: sam, Role: authz.RoleMember}, {PrincipalID: robin, Role: authz.RoleViewer}}

	page, err := e.svc.Channels().Members(as(t, sam), ch.ID, uuid.Nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.readers.spaceID != sp.ID || e.readers.channelID != ch.ID || e.readers.limit != testConfig.MembersPageSize {
		t.Errorf("asked readers of (%s, %s) limit %d", e.readers.spaceID, e.readers.channelID, e.readers.limit)
	}
	if len(page.Items) != 2 || page.Items[0].Principal.Handle != "alex" || page.Items[0].Level != authz.RoleOwner ||
		page.Items[1].Principal.DisplayName != "Sam" || page.Next != sam {
		t.Fatalf("first page %+v", page)
	}
	page, err = e.svc.Channels().Members(as(t, sam), ch.ID, page.Next, 100)
	if err != nil {
		t.Fatal(err)
	}
	if e.readers.after != sam || e.readers.limit != testConfig.MembersPageSize {
		t.Errorf("second page asked after %s limit %d", e.readers.after, e.readers.limit)
	}
	if len(page.Items) != 1 || page.Items[0].Principal.ID != robin || page.Items[0].Level != authz.RoleViewer || page.Next != uuid.Nil {
		t.Errorf("last page %+v", page)
	}

	dm, _, err := e.svc.Channels().CreateDirect(as(t, alex), []uuid.UUID{sam})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Channels().Members(as(t, sam), dm.ID, uuid.Nil, 1); err != nil {
		t.Fatal(err)
	}
	if e.readers.spaceID != uuid.Nil || e.readers.channelID != dm.ID || e.readers.limit != 1 {
		t.Errorf("direct message: asked readers of (%s, %s) limit %d", e.readers.spaceID, e.readers.channelID, e.readers.limit)
	}
	e.readers.err = errDB
	if _, err := e.svc.Channels().Members(as(t, sam), ch.ID, uuid.Nil, 0); !errorsIs(err, errDB) {
		t.Errorf("failing readers: %v", err)
	}
}
