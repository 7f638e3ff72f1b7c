package chat

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wiretest"
)

// TestChatOperationsAppendTheirEvents runs every chat write over HTTP and reads the log after
// each: exactly its registered events, placed in the space, channel and thread of the row,
// naming the changed resource, caused by the actor, with the register's payload; a write that
// changes nothing (an existing direct message, a second archive, a second delete) and every
// read append nothing.
func TestChatOperationsAppendTheirEvents(t *testing.T) {
	t.Parallel()
	w := e2etest.NewPeople(t, false)
	alex, sam := w.Alex, w.Sam

	// createSpace: space.created on the space.
	h := w.Head(t)
	var support apigen.Space
	r := w.Must(t, alex, http.MethodPost, "/api/v1/spaces", `{"name":"  Support ","description":"Questions from example.com"}`, http.StatusCreated, &support)
	if support.Name != "Support" || support.Version != 1 {
		t.Fatalf("createSpace = %+v, want the trimmed name at version 1", support)
	}
	ev := w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "space.created", Kind: kernel.ResourceSpace, ID: support.Id, Space: support.Id, Actor: alex.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{"space_id": support.Id.String(), "name": "Support", "description": "Questions from example.com", "version": 1})

	// createChannel: channel.created on the channel, in the space.
	h = w.Head(t)
	var tickets apigen.Channel
	r = w.Must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/channels", `{"name":"tickets","topic":"One thread per ticket"}`, http.StatusCreated, &tickets)
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "channel.created", Kind: kernel.ResourceChannel, ID: tickets.Id, Space: support.Id, Channel: tickets.Id, Actor: alex.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{
		"channel_id": tickets.Id.String(), "space_id": support.Id.String(), "kind": "standard", "name": "tickets",
		"topic": "One thread per ticket", "version": 1,
	})

	// Sam becomes a member of Support (authz's events, not chat's).
	w.Grant(t, sam, "space", support.Id, "member")

	// createThread: thread.created and message.created (seq 1), with the mention of Sam, who
	// may read the channel, then Alex's own read state of it (spec 05a, own posts are read).
	h = w.Head(t)
	var th apigen.Thread
	r = w.Must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/threads", `{"title":"Printer","content_md":"@sam the printer is jammed"}`, http.StatusCreated, &th)
	first := th.FirstMessage
	if first == nil || first.Seq != 1 || th.LastMessageSeq != 1 {
		t.Fatalf("createThread = %+v, want its first message at seq 1", th)
	}
	ev = w.ExpectEvents(t, h, r,
		e2etest.WantEvent{Typ: "thread.created", Kind: kernel.ResourceThread, ID: th.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: alex.ID},
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: first.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: alex.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: th.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: alex.ID, Audience: alex.ID},
	)
	e2etest.RequirePayload(t, ev[0], map[string]any{
		"thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "title": "Printer", "created_by": alex.ID.String(), "version": 1,
	})
	e2etest.RequirePayload(t, ev[1], map[string]any{
		"message_id": first.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": alex.ID.String(),
		"seq": 1, "content_md": "@sam the printer is jammed", "mention_ids": e2etest.IDStrings(sam.ID), "created_at": stamp(first.CreatedAt),
	})

	// postMessage: message.created with the next seq, then Sam's own read state.
	h = w.Head(t)
	var reply apigen.Message
	r = w.Must(t, sam, http.MethodPost, "/api/v1/threads/"+th.Id.String()+"/messages", `{"content_md":"On my way, @alex"}`, http.StatusCreated, &reply)
	if reply.Seq != 2 || reply.AuthorId != sam.ID {
		t.Fatalf("postMessage = %+v, want seq 2 by Sam", reply)
	}
	ev = w.ExpectEvents(t, h, r,
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: reply.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: sam.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: th.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: sam.ID, Audience: sam.ID})
	e2etest.RequirePayload(t, ev[1], map[string]any{"thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "last_read_seq": 2, "version": 1})
	e2etest.RequirePayload(t, ev[0], map[string]any{
		"message_id": reply.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": sam.ID.String(),
		"seq": 2, "content_md": "On my way, @alex", "mention_ids": e2etest.IDStrings(alex.ID), "created_at": stamp(reply.CreatedAt),
	})

	// editMessage by its author: message.edited; the mentions are resolved anew (none now).
	h = w.Head(t)
	var edited apigen.Message
	r = w.Must(t, sam, http.MethodPatch, "/api/v1/messages/"+reply.Id.String(), `{"content_md":"On my way"}`, http.StatusOK, &edited)
	if edited.EditedAt == nil || len(edited.MentionIds) != 0 {
		t.Fatalf("editMessage = %+v, want an edit time and no mention", edited)
	}
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.edited", Kind: kernel.ResourceMessage, ID: reply.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: sam.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{
		"message_id": reply.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": sam.ID.String(),
		"seq": 2, "content_md": "On my way", "edited_at": stamp(*edited.EditedAt),
	})

	// editMessage by the owner of someone else's message: the actor is Alex, the author Sam.
	h = w.Head(t)
	r = w.Must(t, alex, http.MethodPatch, "/api/v1/messages/"+reply.Id.String(), `{"content_md":"On my way (moderated)"}`, http.StatusOK, &edited)
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.edited", Kind: kernel.ResourceMessage, ID: reply.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: alex.ID})
	if p := e2etest.PayloadOf(t, ev[0]); p["author_id"] != sam.ID.String() || p["content_md"] != "On my way (moderated)" {
		t.Fatalf("message.edited payload %v, want Sam as the author and the new text", p)
	}

	// deleteMessage: message.deleted without text; a second delete appends nothing.
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodDelete, "/api/v1/messages/"+reply.Id.String(), "", http.StatusNoContent, nil)
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.deleted", Kind: kernel.ResourceMessage, ID: reply.Id, Space: support.Id, Channel: tickets.Id, Thread: th.Id, Actor: sam.ID})
	deleted := e2etest.PayloadOf(t, ev[0])
	if _, ok := deleted["content_md"]; ok || ev[0].Redacted || deleted["seq"] != json.Number("2") || deleted["redacted_at"] == nil {
		t.Fatalf("message.deleted = %s (redacted %v), want ids, seq and redacted_at without text", ev[0].Payload, ev[0].Redacted)
	}
	h = w.Head(t)
	w.Must(t, sam, http.MethodDelete, "/api/v1/messages/"+reply.Id.String(), "", http.StatusNoContent, nil)
	w.ExpectNone(t, h, "deleting a deleted message")

	// createDirectMessage: channel.created in no space (kind dm, the sorted participants),
	// then authz's member grant of every participant: grant.created and permissions.changed,
	// both to the participant.
	h = w.Head(t)
	var dm apigen.Channel
	r = w.Must(t, alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q,%q]}`, sam.ID, sam.ID), http.StatusCreated, &dm)
	participants := e2etest.SortedIDs(alex.ID, sam.ID)
	if dm.Kind != apigen.ChannelKindDm || dm.SpaceId != nil || dm.Name != nil || fmt.Sprint(dm.ParticipantIds) != fmt.Sprint(participants) {
		t.Fatalf("createDirectMessage = %+v, want a dm of %v in no space", dm, participants)
	}
	want := []e2etest.WantEvent{{Typ: "channel.created", Kind: kernel.ResourceChannel, ID: dm.Id, Channel: dm.Id, Actor: alex.ID}}
	for _, p := range participants {
		want = append(want,
			e2etest.WantEvent{Typ: "grant.created", Kind: kernel.ResourceGrant, Actor: alex.ID, Audience: p},
			e2etest.WantEvent{Typ: "permissions.changed", Kind: kernel.ResourcePrincipal, ID: p, Actor: alex.ID, Audience: p},
		)
	}
	ev = w.ExpectEvents(t, h, r, want...)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": dm.Id.String(), "kind": "dm", "participant_ids": e2etest.IDStrings(participants...), "version": 1})
	for i, p := range participants {
		g := e2etest.PayloadOf(t, ev[1+2*i])
		if g["principal_id"] != p.String() || g["resource_kind"] != "channel" || g["resource_id"] != dm.Id.String() || g["role"] != "member" {
			t.Fatalf("grant.created for %s = %s, want a member grant on the dm", p, ev[1+2*i].Payload)
		}
	}

	// The same participants again, from Sam's side: the existing dm, 200, nothing written.
	h = w.Head(t)
	var again apigen.Channel
	w.Must(t, sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, alex.ID), http.StatusOK, &again)
	if again.Id != dm.Id {
		t.Fatalf("the second createDirectMessage opened %s, want the existing %s", again.Id, dm.Id)
	}
	w.ExpectNone(t, h, "createDirectMessage of an existing set")

	// A thread in the dm: its events lie in no space.
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPost, "/api/v1/channels/"+dm.Id.String()+"/threads", `{"content_md":"Lunch?"}`, http.StatusCreated, &th)
	w.ExpectEvents(t, h, r,
		e2etest.WantEvent{Typ: "thread.created", Kind: kernel.ResourceThread, ID: th.Id, Channel: dm.Id, Thread: th.Id, Actor: sam.ID},
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: th.FirstMessage.Id, Channel: dm.Id, Thread: th.Id, Actor: sam.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: th.Id, Channel: dm.Id, Thread: th.Id, Actor: sam.ID, Audience: sam.ID},
	)

	// Reads append nothing.
	h = w.Head(t)
	w.Must(t, sam, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, nil)
	w.Must(t, sam, http.MethodGet, "/api/v1/spaces/"+support.Id.String()+"/channels", "", http.StatusOK, nil)
	w.Must(t, sam, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "", http.StatusOK, nil)
	w.ExpectNone(t, h, "the listings")

	// archiveChannel: channel.archived; again: nothing.
	h = w.Head(t)
	var archived apigen.Channel
	r = w.Must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/archive", "", http.StatusOK, &archived)
	if archived.ArchivedAt == nil || archived.Version != 2 {
		t.Fatalf("archiveChannel = %+v, want an archive time at version 2", archived)
	}
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "channel.archived", Kind: kernel.ResourceChannel, ID: tickets.Id, Space: support.Id, Channel: tickets.Id, Actor: alex.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": tickets.Id.String(), "space_id": support.Id.String(), "archived_at": stamp(*archived.ArchivedAt), "version": 2})
	h = w.Head(t)
	w.Must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/archive", "", http.StatusOK, nil)
	w.ExpectNone(t, h, "archiving an archived channel")

	// archiveSpace: space.archived; again: nothing.
	h = w.Head(t)
	var gone apigen.Space
	r = w.Must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/archive", "", http.StatusOK, &gone)
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "space.archived", Kind: kernel.ResourceSpace, ID: support.Id, Space: support.Id, Actor: alex.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{"space_id": support.Id.String(), "archived_at": stamp(*gone.ArchivedAt), "version": 2})
	h = w.Head(t)
	w.Must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/archive", "", http.StatusOK, nil)
	w.ExpectNone(t, h, "archiving an archived space")
}

// stamp is a time as the payloads carry it (encoding/json's RFC 3339 with nanoseconds).
func stamp(at time.Time) string {
	return at.Format(time.RFC3339Nano)
}

// TestDeleteMessageRedactsItsEvents posts a message with a mention, edits it and deletes it:
// listMessages shows it redacted without content or mentions, and every event of it in the
// log (message.created, message.edited) is redacted down to its ids, so no event holds the
// text any more; message.deleted never held it. Editing it afterwards is 409.
func TestDeleteMessageRedactsItsEvents(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	start := w.Head(t)
	const text, edit = "Sam, the door code is 4711, @sam", "Sam, the door code is 4712, @sam"
	m := w.Post(t, w.Alex, w.CampaignThread, text)
	w.Must(t, w.Alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), fmt.Sprintf(`{"content_md":%q}`, edit), http.StatusOK, nil)
	other := w.Post(t, w.Sam, w.CampaignThread, "Thanks, Alex")

	h := w.Head(t)
	r := w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	w.ExpectEvents(t, h, r, e2etest.WantEvent{
		Typ: "message.deleted", Kind: kernel.ResourceMessage, ID: m.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: w.Alex.ID,
	})

	// The message: listed, redacted, without content and mentions, for every reader.
	for _, a := range []e2etest.Actor{w.Alex, w.Sam} {
		var found bool
		for _, got := range w.Messages(t, a, w.CampaignThread) {
			switch got.Id {
			case m.Id:
				found = true
				if !got.Redacted || got.RedactedAt == nil || got.ContentMd != "" || len(got.MentionIds) != 0 || got.Seq != m.Seq || got.AuthorId != w.Alex.ID {
					t.Fatalf("listMessages as %s shows the deleted message as %+v, want it redacted with its ids and seq", a.Name, got)
				}
			case other.Id:
				if got.Redacted || got.ContentMd != "Thanks, Alex" {
					t.Fatalf("the message after it changed: %+v", got)
				}
			}
		}
		if !found {
			t.Fatalf("listMessages as %s does not list the deleted message", a.Name)
		}
	}

	// The log: every event of the message before the deletion is redacted to its ids; no
	// event anywhere holds the text.
	idFields := map[string]bool{"message_id": true, "thread_id": true, "channel_id": true, "author_id": true}
	var redacted int
	for _, e := range w.EventsAfter(t, start) {
		for _, text := range []string{"4711", "4712"} {
			if strings.Contains(string(e.Payload), text) {
				t.Fatalf("event %d %s still holds the deleted text: %s", e.Seq, e.Type, e.Payload)
			}
		}
		if e.ResourceKind != kernel.ResourceMessage || e.ResourceID != m.Id {
			if e.Redacted {
				t.Fatalf("event %d %s of another resource was redacted", e.Seq, e.Type)
			}
			continue
		}
		if e.Type == "message.deleted" {
			if e.Redacted {
				t.Fatal("message.deleted itself was redacted")
			}
			continue
		}
		if !e.Redacted {
			t.Fatalf("event %d %s of the deleted message is not redacted: %s", e.Seq, e.Type, e.Payload)
		}
		p := e2etest.PayloadOf(t, e)
		for k := range p {
			if !idFields[k] {
				t.Fatalf("redacted %s keeps %q: %s", e.Type, k, e.Payload)
			}
		}
		if p["message_id"] != m.Id.String() || p["author_id"] != w.Alex.ID.String() || len(p) != len(idFields) {
			t.Fatalf("redacted %s = %s, want exactly its ids", e.Type, e.Payload)
		}
		redacted++
	}
	if redacted != 2 {
		t.Fatalf("%d events of the message redacted, want 2 (created and edited)", redacted)
	}

	// The first message of a thread: its message.created, appended with thread.created, is
	// redacted, thread.created is not.
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+w.CampaignFirstMsg.String(), "", http.StatusNoContent, nil)
	var seen int
	for _, e := range w.EventsAfter(t, 0) {
		switch {
		case e.Type == "message.created" && e.ResourceID == w.CampaignFirstMsg:
			seen++
			if !e.Redacted || strings.Contains(string(e.Payload), w.CampaignContent) {
				t.Fatalf("the first message's message.created is not redacted: %s", e.Payload)
			}
		case e.Type == "thread.created" && e.ResourceID == w.CampaignThread:
			seen++
			if e.Redacted {
				t.Fatal("thread.created was redacted with its first message")
			}
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the thread's first two events", seen)
	}

	// A deleted message cannot be edited; the refusal writes nothing.
	h = w.Head(t)
	w.Do(t, w.Alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"Back again"}`).RequireProblem(t, http.StatusConflict, "conflict")
	w.ExpectNone(t, h, "editing a deleted message")
}

// TestChatRefusalsAppendNothing sends chat requests that fail validation (400 naming the
// field), authorization (403 for what the actor sees but may not change, 404 for what it
// cannot see) or the state (409), and checks each answer and that the log did not move. Then
// it archives a channel and its space: new threads, messages, edits and channels there are
// 409 too, a refused post leaves the thread's seq where it was (its advance rolled back),
// archiving freed the channel's name, and deleting in the archived channel still works.
func TestChatRefusalsAppendNothing(t *testing.T) {
	t.Parallel()
	const maxBytes = 64
	w := e2etest.NewChatWorld(t, false,
		wiretest.WithSetting(chatapp.KeyMaxMessageBytes, strconv.Itoa(maxBytes)),
		wiretest.WithSetting(chatapp.KeyMaxDMParticipants, "3"))
	alex, sam, robin := w.Alex, w.Sam, w.Robin
	support, tickets := "/api/v1/spaces/"+w.Support.String(), "/api/v1/channels/"+w.Tickets.String()
	marketing, campaigns := "/api/v1/spaces/"+w.Marketing.String(), "/api/v1/channels/"+w.Campaigns.String()
	ticketMsgs, campaignMsgs := "/api/v1/threads/"+w.TicketThread.String()+"/messages", "/api/v1/threads/"+w.CampaignThread.String()+"/messages"
	ticketFirst, campaignFirst := "/api/v1/messages/"+w.TicketFirstMsg.String(), "/api/v1/messages/"+w.CampaignFirstMsg.String()
	random := uuid.NewString()
	tooLong := strings.Repeat("a", maxBytes+1)
	content := func(s string) string { return fmt.Sprintf(`{"content_md":%q}`, s) }
	name := func(s string) string { return fmt.Sprintf(`{"name":%q}`, s) }
	dm := func(ids ...string) string { return `{"participant_ids":["` + strings.Join(ids, `","`) + `"]}` }

	// A channel named beyond ASCII, and a post with an Idempotency-Key, for the conflicts below.
	w.Channel(t, alex, w.Support, "équipe")
	w.Must(t, alex, http.MethodPost, campaignMsgs, content("Kick-off at ten"), http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")

	w.Refuse(t,
		// Validation: every field named, checked after authorization.
		e2etest.Refusal{Name: "space without a name", As: alex, Method: http.MethodPost, Path: "/api/v1/spaces", Body: name(""), Status: 400, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "space with a blank name", As: alex, Method: http.MethodPost, Path: "/api/v1/spaces", Body: name(" \t "), Status: 400, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "space name of 81 characters", As: alex, Method: http.MethodPost, Path: "/api/v1/spaces", Body: name(strings.Repeat("é", 81)), Status: 400, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "space name and description too long", As: alex, Method: http.MethodPost, Path: "/api/v1/spaces",
			Body: fmt.Sprintf(`{"name":%q,"description":%q}`, strings.Repeat("S", 81), strings.Repeat("d", 1001)), Status: 400, Code: e2etest.Invalid, Fields: []string{"name", "description"}},
		e2etest.Refusal{Name: "channel without a name", As: alex, Method: http.MethodPost, Path: support + "/channels", Body: name(""), Status: 400, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "channel name of 81 characters", As: alex, Method: http.MethodPost, Path: support + "/channels", Body: name(strings.Repeat("c", 81)), Status: 400, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "thread content over the limit", As: alex, Method: http.MethodPost, Path: tickets + "/threads", Body: content(tooLong), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "thread title and content invalid", As: alex, Method: http.MethodPost, Path: tickets + "/threads",
			Body: fmt.Sprintf(`{"title":%q,"content_md":""}`, strings.Repeat("t", 201)), Status: 400, Code: e2etest.Invalid, Fields: []string{"title", "content_md"}},
		e2etest.Refusal{Name: "message over the limit", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: content(tooLong), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "message over the limit in bytes, not characters", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: content(strings.Repeat("é", maxBytes/2+1)), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "empty message", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: content(""), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "message of whitespace", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: content(" \n\t "), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "edit over the limit", As: alex, Method: http.MethodPatch, Path: campaignFirst, Body: content(tooLong), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "body that is no JSON", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: `{"content_md":`, Status: 400, Code: e2etest.Invalid, Fields: []string{"body"}},
		e2etest.Refusal{Name: "malformed Idempotency-Key", As: alex, Method: http.MethodPost, Path: ticketMsgs, Body: content("Hello"), Header: []string{"Idempotency-Key", "post alex"}, Status: 400, Code: e2etest.Invalid, Fields: []string{"Idempotency-Key"}},
		e2etest.Refusal{Name: "dm with an unknown participant", As: alex, Method: http.MethodPost, Path: "/api/v1/dms", Body: dm(random), Status: 400, Code: e2etest.Invalid, Fields: []string{"participant_ids"}},
		e2etest.Refusal{Name: "dm with a known and an unknown participant", As: alex, Method: http.MethodPost, Path: "/api/v1/dms", Body: dm(sam.ID.String(), random), Status: 400, Code: e2etest.Invalid, Fields: []string{"participant_ids"}},
		e2etest.Refusal{Name: "dm with the actor alone", As: alex, Method: http.MethodPost, Path: "/api/v1/dms", Body: dm(alex.ID.String()), Status: 400, Code: e2etest.Invalid, Fields: []string{"participant_ids"}},
		e2etest.Refusal{Name: "dm without participants", As: alex, Method: http.MethodPost, Path: "/api/v1/dms", Body: `{"participant_ids":[]}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"participant_ids"}},
		e2etest.Refusal{Name: "dm over chat.max_dm_participants", As: sam, Method: http.MethodPost, Path: "/api/v1/dms", Body: dm(alex.ID.String(), robin.ID.String(), w.Person(t, "Sam Two", "sam-two").ID.String()), Status: 400, Code: e2etest.Invalid, Fields: []string{"participant_ids"}},
		e2etest.Refusal{Name: "negative after", As: alex, Method: http.MethodGet, Path: ticketMsgs + "?after=-1", Status: 400, Code: e2etest.Invalid, Fields: []string{"after"}},

		// 403: Sam reads Support (viewer) and Marketing (member) but may not do these.
		e2etest.Refusal{Name: "a person creates a space", As: sam, Method: http.MethodPost, Path: "/api/v1/spaces", Body: name("Sales"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer creates a channel", As: sam, Method: http.MethodPost, Path: support + "/channels", Body: name("chat"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a member creates a channel", As: sam, Method: http.MethodPost, Path: marketing + "/channels", Body: name("chat"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer starts a thread", As: sam, Method: http.MethodPost, Path: tickets + "/threads", Body: content("Hello"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer posts", As: sam, Method: http.MethodPost, Path: ticketMsgs, Body: content("Hello"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer posts too much", As: sam, Method: http.MethodPost, Path: ticketMsgs, Body: content(tooLong), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer edits", As: sam, Method: http.MethodPatch, Path: ticketFirst, Body: content("Hello"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer deletes", As: sam, Method: http.MethodDelete, Path: ticketFirst, Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a member edits someone else's message", As: sam, Method: http.MethodPatch, Path: campaignFirst, Body: content("Hello"), Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a member deletes someone else's message", As: sam, Method: http.MethodDelete, Path: campaignFirst, Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer archives a channel", As: sam, Method: http.MethodPost, Path: tickets + "/archive", Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a member archives a channel", As: sam, Method: http.MethodPost, Path: campaigns + "/archive", Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a member archives a space", As: sam, Method: http.MethodPost, Path: marketing + "/archive", Status: 403, Code: e2etest.Forbidden},

		// 404: Robin has no grant, so Support does not exist for him; nor does a random id
		// for anyone. Authorization comes before validation, so an invalid body changes nothing.
		e2etest.Refusal{Name: "a stranger creates a channel", As: robin, Method: http.MethodPost, Path: support + "/channels", Body: name("robin"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger lists a space's channels", As: robin, Method: http.MethodGet, Path: support + "/channels", Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger starts a thread", As: robin, Method: http.MethodPost, Path: tickets + "/threads", Body: content("Hello"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger posts", As: robin, Method: http.MethodPost, Path: ticketMsgs, Body: content("Hello"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger posts too much", As: robin, Method: http.MethodPost, Path: ticketMsgs, Body: content(tooLong), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger edits", As: robin, Method: http.MethodPatch, Path: ticketFirst, Body: content("Hello"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger deletes", As: robin, Method: http.MethodDelete, Path: ticketFirst, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger archives a channel", As: robin, Method: http.MethodPost, Path: tickets + "/archive", Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger archives a space", As: robin, Method: http.MethodPost, Path: support + "/archive", Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "the owner posts into no thread", As: alex, Method: http.MethodPost, Path: "/api/v1/threads/" + random + "/messages", Body: content("Hello"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "the owner edits no message", As: alex, Method: http.MethodPatch, Path: "/api/v1/messages/" + random, Body: content("Hello"), Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "the owner creates a channel in no space", As: alex, Method: http.MethodPost, Path: "/api/v1/spaces/" + random + "/channels", Body: name("chat"), Status: 404, Code: e2etest.NotFound},

		// 409: names are unique per space among channels that are not archived, ignoring case.
		e2etest.Refusal{Name: "a taken channel name", As: alex, Method: http.MethodPost, Path: support + "/channels", Body: name("tickets"), Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "a taken channel name in other case", As: alex, Method: http.MethodPost, Path: support + "/channels", Body: name(" TICKETS "), Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "a taken channel name in other case beyond ASCII", As: alex, Method: http.MethodPost, Path: support + "/channels", Body: name("ÉQUIPE"), Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "an Idempotency-Key reused for another message", As: alex, Method: http.MethodPost, Path: campaignMsgs, Body: content("Kick-off at eleven"),
			Header: []string{"Idempotency-Key", "post-alex-1"}, Status: 409, Code: e2etest.Conflict},
	)

	// The same name in another space is no conflict.
	w.Channel(t, alex, w.Marketing, "tickets")

	// Archive campaigns: it takes no new threads, messages or edits, and its name is free.
	lastSeq := int64(len(w.Messages(t, alex, w.CampaignThread)))
	w.Must(t, alex, http.MethodPost, campaigns+"/archive", "", http.StatusOK, nil)
	w.Refuse(t,
		e2etest.Refusal{Name: "a thread in an archived channel", As: alex, Method: http.MethodPost, Path: campaigns + "/threads", Body: content("Hello"), Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "a post in an archived channel", As: sam, Method: http.MethodPost, Path: campaignMsgs, Body: content("Hello"), Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "an edit in an archived channel", As: alex, Method: http.MethodPatch, Path: campaignFirst, Body: content("Hello"), Status: 409, Code: e2etest.Conflict},
	)
	// The refused post took the thread's next seq under its row lock and rolled it back: the
	// read state, clamped to the thread's newest seq, shows the seq where it was.
	var rs apigen.ReadState
	w.Must(t, alex, http.MethodPut, "/api/v1/threads/"+w.CampaignThread.String()+"/read-state", `{"last_read_seq":1000}`, http.StatusOK, &rs)
	if rs.LastReadSeq != lastSeq {
		t.Fatalf("the thread's newest seq is %d after a refused post, want %d", rs.LastReadSeq, lastSeq)
	}
	w.Channel(t, alex, w.Marketing, "Campaigns")

	// Archive Marketing: no new channels.
	w.Must(t, alex, http.MethodPost, marketing+"/archive", "", http.StatusOK, nil)
	w.Refuse(t, e2etest.Refusal{Name: "a channel in an archived space", As: alex, Method: http.MethodPost, Path: marketing + "/channels", Body: name("news"), Status: 409, Code: e2etest.Conflict})

	// Deleting in an archived channel stays possible.
	h := w.Head(t)
	r := w.Must(t, alex, http.MethodDelete, campaignFirst, "", http.StatusNoContent, nil)
	w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.deleted", Kind: kernel.ResourceMessage, ID: w.CampaignFirstMsg, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: alex.ID})

	// The limits are inclusive: 80 characters of name, chat.max_message_bytes bytes of text.
	var long apigen.Channel
	w.Must(t, alex, http.MethodPost, support+"/channels", name(strings.Repeat("é", 80)), http.StatusCreated, &long)
	if long.Name == nil || *long.Name != strings.Repeat("é", 80) {
		t.Fatalf("channel name stored as %v", long.Name)
	}
	w.Must(t, alex, http.MethodPost, ticketMsgs, content(strings.Repeat("é", maxBytes/2)), http.StatusCreated, nil)
}

// TestInvisibleLikeMissing: Robin, without a grant, gets for every operation on Support's
// space, channel, thread and message exactly the 404 he gets for a random id, body for body
// (request ids aside), and nothing is written; listSpaces shows him nothing. A thread named
// beside a channel it does not lie in is missing too, also for Sam, who can read it.
func TestInvisibleLikeMissing(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	random := uuid.NewString()
	ops := []struct {
		method, path, body string
		as                 e2etest.Actor
	}{
		{http.MethodGet, "/api/v1/spaces/%s/channels", "", w.Robin},
		{http.MethodPost, "/api/v1/spaces/%s/channels", `{"name":"robin"}`, w.Robin},
		{http.MethodPost, "/api/v1/spaces/%s/archive", "", w.Robin},
		{http.MethodPost, "/api/v1/channels/%s/threads", `{"content_md":"Hello"}`, w.Robin},
		{http.MethodPost, "/api/v1/channels/%s/archive", "", w.Robin},
		{http.MethodPut, "/api/v1/channels/%s/draft", `{"content_md":"Half a reply"}`, w.Robin},
		{http.MethodDelete, "/api/v1/channels/%s/draft", "", w.Robin},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":"Hello"}`, w.Robin},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":""}`, w.Robin},
		{http.MethodGet, "/api/v1/threads/%s/messages", "", w.Robin},
		{http.MethodPut, "/api/v1/threads/%s/read-state", `{"last_read_seq":1}`, w.Robin},
		{http.MethodPatch, "/api/v1/messages/%s", `{"content_md":"Hello"}`, w.Robin},
		{http.MethodDelete, "/api/v1/messages/%s", "", w.Robin},
	}
	existing := map[string]uuid.UUID{"spaces": w.Support, "channels": w.Tickets, "threads": w.TicketThread, "messages": w.TicketFirstMsg}
	for _, op := range ops {
		kind := strings.Split(op.path, "/")[3]
		h := w.Head(t)
		seen := w.Do(t, op.as, op.method, fmt.Sprintf(op.path, existing[kind]), op.body)
		missing := w.Do(t, op.as, op.method, fmt.Sprintf(op.path, random), op.body)
		seen.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		missing.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		if a, b := e2etest.ProblemBody(t, seen), e2etest.ProblemBody(t, missing); a != b {
			t.Fatalf("%s %s: Support's answers\n%s\nbut a random id\n%s", op.method, op.path, a, b)
		}
		w.ExpectNone(t, h, op.method+" "+op.path)
	}

	var spaces apigen.SpaceViewList
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &spaces)
	if len(spaces.Items) != 0 {
		t.Fatalf("Robin lists %+v, want no space", spaces.Items)
	}

	// A thread of Support named as a thread of Marketing's campaigns: Sam is a member of
	// campaigns and reads the thread, and still gets the 404 of a random thread.
	h := w.Head(t)
	body := func(thread string) string { return fmt.Sprintf(`{"content_md":"Half a reply","thread_id":%q}`, thread) }
	elsewhere := w.Do(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", body(w.TicketThread.String()))
	nowhere := w.Do(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", body(random))
	elsewhere.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
	if a, b := e2etest.ProblemBody(t, elsewhere), e2etest.ProblemBody(t, nowhere); a != b {
		t.Fatalf("a thread of another channel answers\n%s\nbut a random thread\n%s", a, b)
	}
	gone := w.Do(t, w.Sam, http.MethodDelete, "/api/v1/channels/"+w.Campaigns.String()+"/draft?thread_id="+w.TicketThread.String(), "")
	gone.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
	w.ExpectNone(t, h, "drafts of threads in other channels")
}

// TestMessageEditRules: members edit and delete their own messages (member on the message),
// someone else's only as an admin of the channel, here through a space grant (message.update
// and message.delete on the channel); a viewer may not post at all.
func TestMessageEditRules(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	sam, robin := w.Sam, w.Robin
	msgPath := func(id uuid.UUID) string { return "/api/v1/messages/" + id.String() }

	// Sam, a viewer of Support, reads its thread but may not post into it.
	if got := w.Messages(t, sam, w.TicketThread); len(got) != 1 || got[0].ContentMd != w.TicketContent {
		t.Fatalf("Sam reads %+v in tickets", got)
	}
	w.Do(t, sam, http.MethodPost, "/api/v1/threads/"+w.TicketThread.String()+"/messages", `{"content_md":"Hello"}`).RequireProblem(t, http.StatusForbidden, e2etest.Forbidden)

	// Sam, a member of Marketing, posts and edits his own message.
	mine := w.Post(t, sam, w.CampaignThread, "Draft agenda attached")
	h := w.Head(t)
	var edited apigen.Message
	r := w.Must(t, sam, http.MethodPatch, msgPath(mine.Id), `{"content_md":"Agenda attached"}`, http.StatusOK, &edited)
	if edited.ContentMd != "Agenda attached" || edited.EditedAt == nil || edited.AuthorId != sam.ID {
		t.Fatalf("Sam's edit = %+v", edited)
	}
	w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.edited", Kind: kernel.ResourceMessage, ID: mine.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: sam.ID})

	// He may not edit or delete Alex's.
	w.Refuse(t,
		e2etest.Refusal{Name: "Sam edits Alex's message", As: sam, Method: http.MethodPatch, Path: msgPath(w.CampaignFirstMsg), Body: `{"content_md":"Mine now"}`, Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "Sam deletes Alex's message", As: sam, Method: http.MethodDelete, Path: msgPath(w.CampaignFirstMsg), Status: 403, Code: e2etest.Forbidden},
	)

	// Robin, an admin of the space Marketing (and nothing else), moderates: he edits Sam's
	// message and deletes Alex's; the events name Robin as the actor, the author stays.
	w.Grant(t, robin, "space", w.Marketing, "admin")
	h = w.Head(t)
	r = w.Must(t, robin, http.MethodPatch, msgPath(mine.Id), `{"content_md":"Agenda attached (moderated)"}`, http.StatusOK, &edited)
	if edited.AuthorId != sam.ID {
		t.Fatalf("an admin's edit changed the author to %s", edited.AuthorId)
	}
	ev := w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.edited", Kind: kernel.ResourceMessage, ID: mine.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: robin.ID})
	if p := e2etest.PayloadOf(t, ev[0]); p["author_id"] != sam.ID.String() {
		t.Fatalf("message.edited by an admin names author %v, want Sam", p["author_id"])
	}
	h = w.Head(t)
	r = w.Must(t, robin, http.MethodDelete, msgPath(w.CampaignFirstMsg), "", http.StatusNoContent, nil)
	w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.deleted", Kind: kernel.ResourceMessage, ID: w.CampaignFirstMsg, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: robin.ID})

	// Sam reads both changes; Robin still cannot see Support.
	for _, m := range w.Messages(t, sam, w.CampaignThread) {
		switch m.Id {
		case mine.Id:
			if m.ContentMd != "Agenda attached (moderated)" {
				t.Fatalf("Sam reads his message as %q", m.ContentMd)
			}
		case w.CampaignFirstMsg:
			if !m.Redacted {
				t.Fatal("Alex's message is not deleted")
			}
		}
	}
	w.Do(t, robin, http.MethodPatch, msgPath(w.TicketFirstMsg), `{"content_md":"Hello"}`).RequireProblem(t, http.StatusNotFound, e2etest.NotFound)

	// Sam deletes his own message.
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodDelete, msgPath(mine.Id), "", http.StatusNoContent, nil)
	w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.deleted", Kind: kernel.ResourceMessage, ID: mine.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: sam.ID})
}

// TestMentionsOnlyOfReaders: @handle mentions are recorded only for principals who may read
// the channel when the message is posted or edited; Robin here is an agent.
func TestMentionsOnlyOfReaders(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, true)
	alex, sam, robin := w.Alex, w.Sam, w.Robin
	const text = "@sam @robin @nobody the printer again (alex@example.com)"

	// Sam reads Support (viewer); Robin holds no grant; nobody is no principal; an e-mail
	// address mentions nobody.
	h := w.Head(t)
	var m apigen.Message
	r := w.Must(t, alex, http.MethodPost, "/api/v1/threads/"+w.TicketThread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, text), http.StatusCreated, &m)
	if fmt.Sprint(m.MentionIds) != fmt.Sprint([]uuid.UUID{sam.ID}) {
		t.Fatalf("mention_ids = %v, want only Sam %s", m.MentionIds, sam.ID)
	}
	ev := w.ExpectEvents(t, h, r,
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: m.Id, Space: w.Support, Channel: w.Tickets, Thread: w.TicketThread, Actor: alex.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: w.TicketThread, Space: w.Support, Channel: w.Tickets, Thread: w.TicketThread, Actor: alex.ID, Audience: alex.ID})
	if got := e2etest.PayloadOf(t, ev[0])["mention_ids"]; fmt.Sprint(got) != fmt.Sprint(e2etest.IDStrings(sam.ID)) {
		t.Fatalf("message.created mention_ids = %v, want only Sam", got)
	}

	// A grant on the channel lets Robin read it: the edit records him too.
	w.Grant(t, robin, "channel", w.Tickets, "viewer")
	h = w.Head(t)
	r = w.Must(t, alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), fmt.Sprintf(`{"content_md":%q}`, text+" "), http.StatusOK, &m)
	want := e2etest.SortedIDs(sam.ID, robin.ID)
	if fmt.Sprint(m.MentionIds) != fmt.Sprint(want) {
		t.Fatalf("mention_ids after the grant = %v, want %v", m.MentionIds, want)
	}
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "message.edited", Kind: kernel.ResourceMessage, ID: m.Id, Space: w.Support, Channel: w.Tickets, Thread: w.TicketThread, Actor: alex.ID})
	if got := e2etest.PayloadOf(t, ev[0])["mention_ids"]; fmt.Sprint(got) != fmt.Sprint(e2etest.IDStrings(want...)) {
		t.Fatalf("message.edited mention_ids = %v, want %v", got, want)
	}
	if got := w.Messages(t, robin, w.TicketThread); fmt.Sprint(got[len(got)-1].MentionIds) != fmt.Sprint(want) {
		t.Fatalf("listMessages shows mention_ids %v, want %v", got[len(got)-1].MentionIds, want)
	}

	// In a direct message of Alex and Sam only its participants can be mentioned.
	var dm apigen.Channel
	w.Must(t, alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, sam.ID), http.StatusCreated, &dm)
	th := w.Thread(t, alex, dm.Id, "@robin @sam lunch?")
	if fmt.Sprint(th.FirstMessage.MentionIds) != fmt.Sprint([]uuid.UUID{sam.ID}) {
		t.Fatalf("mentions in a dm = %v, want only Sam", th.FirstMessage.MentionIds)
	}
}

// TestListingsShowLevelAndCapabilities: listSpaces and listSpaceChannels show each actor the
// spaces and channels it may read that are not archived, with its effective role there
// (level) and the actions it may perform (capabilities, sorted).
func TestListingsShowLevelAndCapabilities(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, true)
	alex, sam, robin := w.Alex, w.Sam, w.Robin
	news := w.Channel(t, alex, w.Marketing, "news")
	w.Grant(t, sam, "channel", news, "admin")
	w.Grant(t, robin, "channel", w.Campaigns, "member")
	old := w.Channel(t, alex, w.Support, "old-tickets")
	w.Must(t, alex, http.MethodPost, "/api/v1/channels/"+old.String()+"/archive", "", http.StatusOK, nil)
	archived := w.Space(t, "Archive")
	w.Must(t, alex, http.MethodPost, "/api/v1/spaces/"+archived.String()+"/archive", "", http.StatusOK, nil)

	spaceAdmin := "channel.create grant.admin space.archive space.update"
	channelAdmin := "channel.archive channel.update draft.write grant.admin message.create readstate.write thread.create"
	member := "draft.write message.create readstate.write thread.create"
	type item struct{ name, level, caps string }
	spaces := func(a e2etest.Actor) []item {
		var list apigen.SpaceViewList
		w.Must(t, a, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &list)
		out := make([]item, len(list.Items))
		for i, s := range list.Items {
			out[i] = item{name: s.Name, caps: capStrings(s.Capabilities)}
			if s.Level != nil {
				out[i].level = string(*s.Level)
			}
		}
		return out
	}
	channels := func(a e2etest.Actor, space uuid.UUID) []item {
		var list apigen.ChannelViewList
		w.Must(t, a, http.MethodGet, "/api/v1/spaces/"+space.String()+"/channels", "", http.StatusOK, &list)
		out := make([]item, len(list.Items))
		for i, c := range list.Items {
			out[i] = item{level: string(c.Level), caps: capStrings(c.Capabilities)}
			if c.Name != nil {
				out[i].name = *c.Name
			}
		}
		return out
	}
	for _, tc := range []struct {
		what string
		got  []item
		want []item
	}{
		{"Alex's spaces", spaces(alex), []item{{"Marketing", "owner", spaceAdmin}, {"Support", "owner", spaceAdmin}}},
		{"Sam's spaces", spaces(sam), []item{{"Marketing", "member", ""}, {"Support", "viewer", ""}}},
		// Robin sees Marketing through his grant on one of its channels: no level there.
		{"Robin's spaces", spaces(robin), []item{{"Marketing", "", ""}}},
		{"Support's channels for Alex", channels(alex, w.Support), []item{{"tickets", "owner", channelAdmin}}},
		{"Support's channels for Sam", channels(sam, w.Support), []item{{"tickets", "viewer", ""}}},
		{"Marketing's channels for Alex", channels(alex, w.Marketing), []item{{"campaigns", "owner", channelAdmin}, {"news", "owner", channelAdmin}}},
		{"Marketing's channels for Sam", channels(sam, w.Marketing), []item{{"campaigns", "member", member}, {"news", "admin", channelAdmin}}},
		{"Marketing's channels for Robin", channels(robin, w.Marketing), []item{{"campaigns", "member", member}}},
	} {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s:\n got  %v\n want %v", tc.what, tc.got, tc.want)
		}
	}
	w.Do(t, robin, http.MethodGet, "/api/v1/spaces/"+w.Support.String()+"/channels", "").RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
}

// capStrings joins capabilities with spaces.
func capStrings(caps []apigen.Capability) string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = string(c)
	}
	return strings.Join(out, " ")
}

// TestConcurrentPostersGetConsecutiveSeqs: eight clients post into one thread at once over
// HTTP, several messages each; the thread's messages then carry the seqs 1..N without gap or
// duplicate, each poster got the seq listMessages shows, and the log holds one message.created
// per post in seq order (a poster holds the thread's row lock until it commits).
func TestConcurrentPostersGetConsecutiveSeqs(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	w.Grant(t, w.Robin, "space", w.Marketing, "member")
	posters := []e2etest.Actor{w.Alex, w.Sam, w.Robin}
	const clients, perClient = 8, 4
	start := w.Head(t)

	type result struct {
		req    *http.Request
		status int
		header http.Header
		body   []byte
		err    error
	}
	results := make([][]result, clients)
	begin := make(chan struct{})
	var wg sync.WaitGroup
	path := "/api/v1/threads/" + w.CampaignThread.String() + "/messages"
	httpc := w.Env.Server.Client()
	for c := range clients {
		results[c] = make([]result, perClient)
		a := posters[c%len(posters)]
		for i := range perClient {
			req := w.Env.Client.NewRequest(http.MethodPost, path, strings.NewReader(fmt.Sprintf(`{"content_md":"client %d, post %d"}`, c, i)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.Token)
			results[c][i].req = req
		}
		wg.Go(func() {
			<-begin
			for i := range results[c] {
				r := &results[c][i]
				resp, err := httpc.Do(r.req)
				if err != nil {
					r.err = err
					return
				}
				r.status, r.header = resp.StatusCode, resp.Header
				r.body, r.err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
	close(begin)
	wg.Wait()

	bySeq := map[int64]apigen.Message{}
	for c := range results {
		prev := int64(0)
		for i, r := range results[c] {
			if r.err != nil {
				t.Fatalf("client %d post %d: %v", c, i, r.err)
			}
			if err := wiretest.Validate(t.Context(), r.req, r.status, r.header, r.body); err != nil {
				t.Fatalf("client %d post %d breaks the contract: %v", c, i, err)
			}
			if r.status != http.StatusCreated {
				t.Fatalf("client %d post %d = %d %s", c, i, r.status, r.body)
			}
			var m apigen.Message
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Fatal(err)
			}
			if dup, ok := bySeq[m.Seq]; ok {
				t.Fatalf("seq %d given twice: %s and %s", m.Seq, dup.Id, m.Id)
			}
			if m.Seq <= prev {
				t.Fatalf("client %d got seq %d after %d", c, m.Seq, prev)
			}
			prev = m.Seq
			bySeq[m.Seq] = m
		}
	}

	// The thread: seq 1 (its first message) and then one seq per post, consecutive.
	const n = 1 + clients*perClient
	list := w.Messages(t, w.Alex, w.CampaignThread)
	if len(list) != n {
		t.Fatalf("the thread has %d messages, want %d", len(list), n)
	}
	for i, m := range list {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d of the thread has seq %d, want %d", i, m.Seq, i+1)
		}
		if i > 0 && (bySeq[m.Seq].Id != m.Id || bySeq[m.Seq].ContentMd != m.ContentMd) {
			t.Fatalf("seq %d is %s, but its poster got %s", m.Seq, m.Id, bySeq[m.Seq].Id)
		}
	}

	// Paging through it by next_cursor yields the same messages.
	var paged []apigen.Message
	for after := int64(0); ; {
		var page apigen.MessageList
		w.Must(t, w.Sam, http.MethodGet, fmt.Sprintf("%s?after=%d&limit=10", path, after), "", http.StatusOK, &page)
		paged = append(paged, page.Items...)
		if page.NextCursor == nil {
			break
		}
		after = *page.NextCursor
	}
	if len(paged) != n || paged[n-1].Id != list[n-1].Id {
		t.Fatalf("paging by 10 yields %d messages, want %d", len(paged), n)
	}

	// The log: one message.created per post, in seq order, each followed by its author's own
	// read state of the thread at its seq (spec 05a, own posts are read).
	var logged []int64
	events := w.EventsAfter(t, start)
	for i, e := range events {
		if e.Type == "read_state.updated" {
			if i == 0 {
				t.Fatalf("event %d is a read state before any post", e.Seq)
			}
			prev := events[i-1]
			if prev.Type != "message.created" || e.AudienceID != prev.ActorID || e.ActorID != prev.ActorID ||
				e2etest.PayloadOf(t, e)["last_read_seq"] != e2etest.PayloadOf(t, prev)["seq"] {
				t.Fatalf("event %d is a read state that follows no own post of its owner", e.Seq)
			}
			continue
		}
		if e.Type != "message.created" || e.ResourceID != bySeq[int64(len(logged)+2)].Id {
			t.Fatalf("event %d is %s of %s, want message.created of seq %d", e.Seq, e.Type, e.ResourceID, len(logged)+2)
		}
		seq, err := e2etest.PayloadOf(t, e)["seq"].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		logged = append(logged, seq)
	}
	if len(logged) != clients*perClient {
		t.Fatalf("%d message.created events, want %d", len(logged), clients*perClient)
	}
}

// TestIdempotencyKeyOnPostMessage: a retried postMessage with the same Idempotency-Key gets
// the first response again (the same message, Idempotency-Replayed) and writes neither a
// second message nor a second event; another actor's same key is its own.
func TestIdempotencyKeyOnPostMessage(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	path := "/api/v1/threads/" + w.CampaignThread.String() + "/messages"
	const body = `{"content_md":"Budget approved, @sam"}`
	h := w.Head(t)
	first := w.Must(t, w.Alex, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")
	retry := w.Must(t, w.Alex, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")
	if first.Header.Get("Idempotency-Replayed") != "" || retry.Header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("Idempotency-Replayed = %q then %q, want none then true", first.Header.Get("Idempotency-Replayed"), retry.Header.Get("Idempotency-Replayed"))
	}
	if string(first.Body) != string(retry.Body) {
		t.Fatalf("the retry answered\n%s\nnot the first\n%s", retry.Body, first.Body)
	}
	var m apigen.Message
	first.JSON(t, &m)
	// One message.created and Alex's own read state, of the first request.
	w.ExpectEvents(t, h, first,
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: m.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: w.Alex.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: w.CampaignThread, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: w.Alex.ID, Audience: w.Alex.ID})
	// One message.
	list := w.Messages(t, w.Sam, w.CampaignThread)
	count := 0
	for _, got := range list {
		if got.ContentMd == "Budget approved, @sam" {
			count++
		}
	}
	if count != 1 || len(list) != 2 || list[1].Id != m.Id || list[1].Seq != 2 {
		t.Fatalf("the thread holds %d copies in %+v, want one at seq 2", count, list)
	}

	// Sam's request with the same key is his own: it runs.
	h = w.Head(t)
	var sams apigen.Message
	r := w.Must(t, w.Sam, http.MethodPost, path, body, http.StatusCreated, &sams, "Idempotency-Key", "post-alex-1")
	if r.Header.Get("Idempotency-Replayed") != "" || sams.Id == m.Id || sams.Seq != 3 {
		t.Fatalf("Sam's post with Alex's key = %+v (replayed %q), want a new message", sams, r.Header.Get("Idempotency-Replayed"))
	}
	w.ExpectEvents(t, h, r,
		e2etest.WantEvent{Typ: "message.created", Kind: kernel.ResourceMessage, ID: sams.Id, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: w.Sam.ID},
		e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: w.CampaignThread, Space: w.Marketing, Channel: w.Campaigns, Thread: w.CampaignThread, Actor: w.Sam.ID, Audience: w.Sam.ID})
}

// TestDirectMessageOnePerParticipantSet: Alex and Sam open their direct message at the same
// moment from both sides; one request creates it (201), the other gets it (200), and the log
// has one channel.created and one member grant per participant. Only the participants see
// it: Robin gets 404 for its thread as for a random one.
func TestDirectMessageOnePerParticipantSet(t *testing.T) {
	t.Parallel()
	w := e2etest.NewPeople(t, false)
	start := w.Head(t)
	type result struct {
		req    *http.Request
		status int
		header http.Header
		body   []byte
		err    error
	}
	sides := []struct {
		from e2etest.Actor
		to   uuid.UUID
	}{{w.Alex, w.Sam.ID}, {w.Sam, w.Alex.ID}, {w.Alex, w.Sam.ID}, {w.Sam, w.Alex.ID}}
	results := make([]result, len(sides))
	begin := make(chan struct{})
	var wg sync.WaitGroup
	httpc := w.Env.Server.Client()
	for i, s := range sides {
		req := w.Env.Client.NewRequest(http.MethodPost, "/api/v1/dms", strings.NewReader(fmt.Sprintf(`{"participant_ids":[%q]}`, s.to)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.from.Token)
		results[i].req = req
		wg.Go(func() {
			<-begin
			resp, err := httpc.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer func() { _ = resp.Body.Close() }()
			results[i].status, results[i].header = resp.StatusCode, resp.Header
			results[i].body, results[i].err = io.ReadAll(resp.Body)
		})
	}
	close(begin)
	wg.Wait()
	var dm uuid.UUID
	created := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if err := wiretest.Validate(t.Context(), r.req, r.status, r.header, r.body); err != nil {
			t.Fatalf("request %d breaks the contract: %v", i, err)
		}
		var ch apigen.Channel
		if err := json.Unmarshal(r.body, &ch); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.status == http.StatusCreated:
			created++
		case r.status != http.StatusOK:
			t.Fatalf("request %d = %d %s", i, r.status, r.body)
		}
		if dm == uuid.Nil {
			dm = ch.Id
		} else if ch.Id != dm {
			t.Fatalf("two direct messages for one pair: %s and %s", dm, ch.Id)
		}
	}
	if created != 1 {
		t.Fatalf("%d requests created the direct message, want 1", created)
	}
	counts := map[string]int{}
	for _, e := range w.EventsAfter(t, start) {
		counts[e.Type]++
	}
	if fmt.Sprint(counts) != "map[channel.created:1 grant.created:2 permissions.changed:2]" {
		t.Fatalf("the log has %v, want one channel.created and two grants", counts)
	}

	// The participants post; Robin sees nothing of it.
	th := w.Thread(t, w.Sam, dm, "Lunch at noon?")
	w.Post(t, w.Alex, th.Id, "Yes")
	random := uuid.NewString()
	for _, op := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/threads/%s/messages", ""},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":"Me too"}`},
		{http.MethodPut, "/api/v1/threads/%s/read-state", `{"last_read_seq":2}`},
	} {
		seen := w.Do(t, w.Robin, op.method, fmt.Sprintf(op.path, th.Id), op.body)
		missing := w.Do(t, w.Robin, op.method, fmt.Sprintf(op.path, random), op.body)
		seen.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		if a, b := e2etest.ProblemBody(t, seen), e2etest.ProblemBody(t, missing); a != b {
			t.Fatalf("%s %s: the dm's thread answers Robin\n%s\nbut a random id\n%s", op.method, op.path, a, b)
		}
	}
	w.Do(t, w.Robin, http.MethodPost, "/api/v1/channels/"+dm.String()+"/threads", `{"content_md":"Hi"}`).RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
}
