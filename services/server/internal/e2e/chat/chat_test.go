package wire_test

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
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wire/wiretest"
)

// TestChatOperationsAppendTheirEvents runs every chat write over HTTP and reads the log after
// each: exactly its registered events, placed in the space, channel and thread of the row,
// naming the changed resource, caused by the actor, with the register's payload; a write that
// changes nothing (an existing direct message, a second archive, a second delete) and every
// read append nothing.
func TestChatOperationsAppendTheirEvents(t *testing.T) {
	t.Parallel()
	w := newPeople(t, false)
	alex, sam := w.alex, w.sam

	// createSpace: space.created on the space.
	h := w.head(t)
	var support apigen.Space
	r := w.must(t, alex, http.MethodPost, "/api/v1/spaces", `{"name":"  Support ","description":"Questions from example.com"}`, http.StatusCreated, &support)
	if support.Name != "Support" || support.Version != 1 {
		t.Fatalf("createSpace = %+v, want the trimmed name at version 1", support)
	}
	ev := w.expectEvents(t, h, r, wantEvent{typ: "space.created", kind: kernel.ResourceSpace, id: support.Id, space: support.Id, actor: alex.id})
	requirePayload(t, ev[0], map[string]any{"space_id": support.Id.String(), "name": "Support", "description": "Questions from example.com", "version": 1})

	// createChannel: channel.created on the channel, in the space.
	h = w.head(t)
	var tickets apigen.Channel
	r = w.must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/channels", `{"name":"tickets","topic":"One thread per ticket"}`, http.StatusCreated, &tickets)
	ev = w.expectEvents(t, h, r, wantEvent{typ: "channel.created", kind: kernel.ResourceChannel, id: tickets.Id, space: support.Id, channel: tickets.Id, actor: alex.id})
	requirePayload(t, ev[0], map[string]any{
		"channel_id": tickets.Id.String(), "space_id": support.Id.String(), "kind": "standard", "name": "tickets",
		"topic": "One thread per ticket", "version": 1,
	})

	// Sam becomes a member of Support (authz's events, not chat's).
	w.grant(t, sam, "space", support.Id, "member")

	// createThread: thread.created and message.created (seq 1), with the mention of Sam, who
	// may read the channel, then Alex's own read state of it (spec 05a, own posts are read).
	h = w.head(t)
	var th apigen.Thread
	r = w.must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/threads", `{"title":"Printer","content_md":"@sam the printer is jammed"}`, http.StatusCreated, &th)
	first := th.FirstMessage
	if first == nil || first.Seq != 1 || th.LastMessageSeq != 1 {
		t.Fatalf("createThread = %+v, want its first message at seq 1", th)
	}
	ev = w.expectEvents(t, h, r,
		wantEvent{typ: "thread.created", kind: kernel.ResourceThread, id: th.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: alex.id},
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: first.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: alex.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: th.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: alex.id, audience: alex.id},
	)
	requirePayload(t, ev[0], map[string]any{
		"thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "title": "Printer", "created_by": alex.id.String(), "version": 1,
	})
	requirePayload(t, ev[1], map[string]any{
		"message_id": first.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": alex.id.String(),
		"seq": 1, "content_md": "@sam the printer is jammed", "mention_ids": idStrings(sam.id), "created_at": stamp(first.CreatedAt),
	})

	// postMessage: message.created with the next seq, then Sam's own read state.
	h = w.head(t)
	var reply apigen.Message
	r = w.must(t, sam, http.MethodPost, "/api/v1/threads/"+th.Id.String()+"/messages", `{"content_md":"On my way, @alex"}`, http.StatusCreated, &reply)
	if reply.Seq != 2 || reply.AuthorId != sam.id {
		t.Fatalf("postMessage = %+v, want seq 2 by Sam", reply)
	}
	ev = w.expectEvents(t, h, r,
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: reply.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: sam.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: th.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: sam.id, audience: sam.id})
	requirePayload(t, ev[1], map[string]any{"thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "last_read_seq": 2, "version": 1})
	requirePayload(t, ev[0], map[string]any{
		"message_id": reply.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": sam.id.String(),
		"seq": 2, "content_md": "On my way, @alex", "mention_ids": idStrings(alex.id), "created_at": stamp(reply.CreatedAt),
	})

	// editMessage by its author: message.edited; the mentions are resolved anew (none now).
	h = w.head(t)
	var edited apigen.Message
	r = w.must(t, sam, http.MethodPatch, "/api/v1/messages/"+reply.Id.String(), `{"content_md":"On my way"}`, http.StatusOK, &edited)
	if edited.EditedAt == nil || len(edited.MentionIds) != 0 {
		t.Fatalf("editMessage = %+v, want an edit time and no mention", edited)
	}
	ev = w.expectEvents(t, h, r, wantEvent{typ: "message.edited", kind: kernel.ResourceMessage, id: reply.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: sam.id})
	requirePayload(t, ev[0], map[string]any{
		"message_id": reply.Id.String(), "thread_id": th.Id.String(), "channel_id": tickets.Id.String(), "author_id": sam.id.String(),
		"seq": 2, "content_md": "On my way", "edited_at": stamp(*edited.EditedAt),
	})

	// editMessage by the owner of someone else's message: the actor is Alex, the author Sam.
	h = w.head(t)
	r = w.must(t, alex, http.MethodPatch, "/api/v1/messages/"+reply.Id.String(), `{"content_md":"On my way (moderated)"}`, http.StatusOK, &edited)
	ev = w.expectEvents(t, h, r, wantEvent{typ: "message.edited", kind: kernel.ResourceMessage, id: reply.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: alex.id})
	if p := payloadOf(t, ev[0]); p["author_id"] != sam.id.String() || p["content_md"] != "On my way (moderated)" {
		t.Fatalf("message.edited payload %v, want Sam as the author and the new text", p)
	}

	// deleteMessage: message.deleted without text; a second delete appends nothing.
	h = w.head(t)
	r = w.must(t, sam, http.MethodDelete, "/api/v1/messages/"+reply.Id.String(), "", http.StatusNoContent, nil)
	ev = w.expectEvents(t, h, r, wantEvent{typ: "message.deleted", kind: kernel.ResourceMessage, id: reply.Id, space: support.Id, channel: tickets.Id, thread: th.Id, actor: sam.id})
	deleted := payloadOf(t, ev[0])
	if _, ok := deleted["content_md"]; ok || ev[0].Redacted || deleted["seq"] != json.Number("2") || deleted["redacted_at"] == nil {
		t.Fatalf("message.deleted = %s (redacted %v), want ids, seq and redacted_at without text", ev[0].Payload, ev[0].Redacted)
	}
	h = w.head(t)
	w.must(t, sam, http.MethodDelete, "/api/v1/messages/"+reply.Id.String(), "", http.StatusNoContent, nil)
	w.expectNone(t, h, "deleting a deleted message")

	// createDirectMessage: channel.created in no space (kind dm, the sorted participants),
	// then authz's member grant of every participant: grant.created and permissions.changed,
	// both to the participant.
	h = w.head(t)
	var dm apigen.Channel
	r = w.must(t, alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q,%q]}`, sam.id, sam.id), http.StatusCreated, &dm)
	participants := sortedIDs(alex.id, sam.id)
	if dm.Kind != apigen.ChannelKindDm || dm.SpaceId != nil || dm.Name != nil || fmt.Sprint(dm.ParticipantIds) != fmt.Sprint(participants) {
		t.Fatalf("createDirectMessage = %+v, want a dm of %v in no space", dm, participants)
	}
	want := []wantEvent{{typ: "channel.created", kind: kernel.ResourceChannel, id: dm.Id, channel: dm.Id, actor: alex.id}}
	for _, p := range participants {
		want = append(want,
			wantEvent{typ: "grant.created", kind: kernel.ResourceGrant, actor: alex.id, audience: p},
			wantEvent{typ: "permissions.changed", kind: kernel.ResourcePrincipal, id: p, actor: alex.id, audience: p},
		)
	}
	ev = w.expectEvents(t, h, r, want...)
	requirePayload(t, ev[0], map[string]any{"channel_id": dm.Id.String(), "kind": "dm", "participant_ids": idStrings(participants...), "version": 1})
	for i, p := range participants {
		g := payloadOf(t, ev[1+2*i])
		if g["principal_id"] != p.String() || g["resource_kind"] != "channel" || g["resource_id"] != dm.Id.String() || g["role"] != "member" {
			t.Fatalf("grant.created for %s = %s, want a member grant on the dm", p, ev[1+2*i].Payload)
		}
	}

	// The same participants again, from Sam's side: the existing dm, 200, nothing written.
	h = w.head(t)
	var again apigen.Channel
	w.must(t, sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, alex.id), http.StatusOK, &again)
	if again.Id != dm.Id {
		t.Fatalf("the second createDirectMessage opened %s, want the existing %s", again.Id, dm.Id)
	}
	w.expectNone(t, h, "createDirectMessage of an existing set")

	// A thread in the dm: its events lie in no space.
	h = w.head(t)
	r = w.must(t, sam, http.MethodPost, "/api/v1/channels/"+dm.Id.String()+"/threads", `{"content_md":"Lunch?"}`, http.StatusCreated, &th)
	w.expectEvents(t, h, r,
		wantEvent{typ: "thread.created", kind: kernel.ResourceThread, id: th.Id, channel: dm.Id, thread: th.Id, actor: sam.id},
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: th.FirstMessage.Id, channel: dm.Id, thread: th.Id, actor: sam.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: th.Id, channel: dm.Id, thread: th.Id, actor: sam.id, audience: sam.id},
	)

	// Reads append nothing.
	h = w.head(t)
	w.must(t, sam, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, nil)
	w.must(t, sam, http.MethodGet, "/api/v1/spaces/"+support.Id.String()+"/channels", "", http.StatusOK, nil)
	w.must(t, sam, http.MethodGet, "/api/v1/threads/"+th.Id.String()+"/messages", "", http.StatusOK, nil)
	w.expectNone(t, h, "the listings")

	// archiveChannel: channel.archived; again: nothing.
	h = w.head(t)
	var archived apigen.Channel
	r = w.must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/archive", "", http.StatusOK, &archived)
	if archived.ArchivedAt == nil || archived.Version != 2 {
		t.Fatalf("archiveChannel = %+v, want an archive time at version 2", archived)
	}
	ev = w.expectEvents(t, h, r, wantEvent{typ: "channel.archived", kind: kernel.ResourceChannel, id: tickets.Id, space: support.Id, channel: tickets.Id, actor: alex.id})
	requirePayload(t, ev[0], map[string]any{"channel_id": tickets.Id.String(), "space_id": support.Id.String(), "archived_at": stamp(*archived.ArchivedAt), "version": 2})
	h = w.head(t)
	w.must(t, alex, http.MethodPost, "/api/v1/channels/"+tickets.Id.String()+"/archive", "", http.StatusOK, nil)
	w.expectNone(t, h, "archiving an archived channel")

	// archiveSpace: space.archived; again: nothing.
	h = w.head(t)
	var gone apigen.Space
	r = w.must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/archive", "", http.StatusOK, &gone)
	ev = w.expectEvents(t, h, r, wantEvent{typ: "space.archived", kind: kernel.ResourceSpace, id: support.Id, space: support.Id, actor: alex.id})
	requirePayload(t, ev[0], map[string]any{"space_id": support.Id.String(), "archived_at": stamp(*gone.ArchivedAt), "version": 2})
	h = w.head(t)
	w.must(t, alex, http.MethodPost, "/api/v1/spaces/"+support.Id.String()+"/archive", "", http.StatusOK, nil)
	w.expectNone(t, h, "archiving an archived space")
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
	w := newChatWorld(t, false)
	start := w.head(t)
	const text, edit = "Sam, the door code is 4711, @sam", "Sam, the door code is 4712, @sam"
	m := w.post(t, w.alex, w.campaignThread, text)
	w.must(t, w.alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), fmt.Sprintf(`{"content_md":%q}`, edit), http.StatusOK, nil)
	other := w.post(t, w.sam, w.campaignThread, "Thanks, Alex")

	h := w.head(t)
	r := w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	w.expectEvents(t, h, r, wantEvent{
		typ: "message.deleted", kind: kernel.ResourceMessage, id: m.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: w.alex.id,
	})

	// The message: listed, redacted, without content and mentions, for every reader.
	for _, a := range []worldActor{w.alex, w.sam} {
		var found bool
		for _, got := range w.messages(t, a, w.campaignThread) {
			switch got.Id {
			case m.Id:
				found = true
				if !got.Redacted || got.RedactedAt == nil || got.ContentMd != "" || len(got.MentionIds) != 0 || got.Seq != m.Seq || got.AuthorId != w.alex.id {
					t.Fatalf("listMessages as %s shows the deleted message as %+v, want it redacted with its ids and seq", a.name, got)
				}
			case other.Id:
				if got.Redacted || got.ContentMd != "Thanks, Alex" {
					t.Fatalf("the message after it changed: %+v", got)
				}
			}
		}
		if !found {
			t.Fatalf("listMessages as %s does not list the deleted message", a.name)
		}
	}

	// The log: every event of the message before the deletion is redacted to its ids; no
	// event anywhere holds the text.
	idFields := map[string]bool{"message_id": true, "thread_id": true, "channel_id": true, "author_id": true}
	var redacted int
	for _, e := range w.eventsAfter(t, start) {
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
		p := payloadOf(t, e)
		for k := range p {
			if !idFields[k] {
				t.Fatalf("redacted %s keeps %q: %s", e.Type, k, e.Payload)
			}
		}
		if p["message_id"] != m.Id.String() || p["author_id"] != w.alex.id.String() || len(p) != len(idFields) {
			t.Fatalf("redacted %s = %s, want exactly its ids", e.Type, e.Payload)
		}
		redacted++
	}
	if redacted != 2 {
		t.Fatalf("%d events of the message redacted, want 2 (created and edited)", redacted)
	}

	// The first message of a thread: its message.created, appended with thread.created, is
	// redacted, thread.created is not.
	w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+w.campaignFirstMsg.String(), "", http.StatusNoContent, nil)
	var seen int
	for _, e := range w.eventsAfter(t, 0) {
		switch {
		case e.Type == "message.created" && e.ResourceID == w.campaignFirstMsg:
			seen++
			if !e.Redacted || strings.Contains(string(e.Payload), w.campaignContent) {
				t.Fatalf("the first message's message.created is not redacted: %s", e.Payload)
			}
		case e.Type == "thread.created" && e.ResourceID == w.campaignThread:
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
	h = w.head(t)
	w.do(t, w.alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"Back again"}`).RequireProblem(t, http.StatusConflict, "conflict")
	w.expectNone(t, h, "editing a deleted message")
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
	w := newChatWorld(t, false,
		wiretest.WithSetting(chatapp.KeyMaxMessageBytes, strconv.Itoa(maxBytes)),
		wiretest.WithSetting(chatapp.KeyMaxDMParticipants, "3"))
	alex, sam, robin := w.alex, w.sam, w.robin
	support, tickets := "/api/v1/spaces/"+w.support.String(), "/api/v1/channels/"+w.tickets.String()
	marketing, campaigns := "/api/v1/spaces/"+w.marketing.String(), "/api/v1/channels/"+w.campaigns.String()
	ticketMsgs, campaignMsgs := "/api/v1/threads/"+w.ticketThread.String()+"/messages", "/api/v1/threads/"+w.campaignThread.String()+"/messages"
	ticketFirst, campaignFirst := "/api/v1/messages/"+w.ticketFirstMsg.String(), "/api/v1/messages/"+w.campaignFirstMsg.String()
	random := uuid.NewString()
	tooLong := strings.Repeat("a", maxBytes+1)
	content := func(s string) string { return fmt.Sprintf(`{"content_md":%q}`, s) }
	name := func(s string) string { return fmt.Sprintf(`{"name":%q}`, s) }
	dm := func(ids ...string) string { return `{"participant_ids":["` + strings.Join(ids, `","`) + `"]}` }

	// A channel named beyond ASCII, and a post with an Idempotency-Key, for the conflicts below.
	w.channel(t, alex, w.support, "équipe")
	w.must(t, alex, http.MethodPost, campaignMsgs, content("Kick-off at ten"), http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")

	w.refuse(t,
		// Validation: every field named, checked after authorization.
		refusal{name: "space without a name", as: alex, method: http.MethodPost, path: "/api/v1/spaces", body: name(""), status: 400, code: invalid, fields: []string{"name"}},
		refusal{name: "space with a blank name", as: alex, method: http.MethodPost, path: "/api/v1/spaces", body: name(" \t "), status: 400, code: invalid, fields: []string{"name"}},
		refusal{name: "space name of 81 characters", as: alex, method: http.MethodPost, path: "/api/v1/spaces", body: name(strings.Repeat("é", 81)), status: 400, code: invalid, fields: []string{"name"}},
		refusal{name: "space name and description too long", as: alex, method: http.MethodPost, path: "/api/v1/spaces",
			body: fmt.Sprintf(`{"name":%q,"description":%q}`, strings.Repeat("S", 81), strings.Repeat("d", 1001)), status: 400, code: invalid, fields: []string{"name", "description"}},
		refusal{name: "channel without a name", as: alex, method: http.MethodPost, path: support + "/channels", body: name(""), status: 400, code: invalid, fields: []string{"name"}},
		refusal{name: "channel name of 81 characters", as: alex, method: http.MethodPost, path: support + "/channels", body: name(strings.Repeat("c", 81)), status: 400, code: invalid, fields: []string{"name"}},
		refusal{name: "thread content over the limit", as: alex, method: http.MethodPost, path: tickets + "/threads", body: content(tooLong), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "thread title and content invalid", as: alex, method: http.MethodPost, path: tickets + "/threads",
			body: fmt.Sprintf(`{"title":%q,"content_md":""}`, strings.Repeat("t", 201)), status: 400, code: invalid, fields: []string{"title", "content_md"}},
		refusal{name: "message over the limit", as: alex, method: http.MethodPost, path: ticketMsgs, body: content(tooLong), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "message over the limit in bytes, not characters", as: alex, method: http.MethodPost, path: ticketMsgs, body: content(strings.Repeat("é", maxBytes/2+1)), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "empty message", as: alex, method: http.MethodPost, path: ticketMsgs, body: content(""), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "message of whitespace", as: alex, method: http.MethodPost, path: ticketMsgs, body: content(" \n\t "), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "edit over the limit", as: alex, method: http.MethodPatch, path: campaignFirst, body: content(tooLong), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "body that is no JSON", as: alex, method: http.MethodPost, path: ticketMsgs, body: `{"content_md":`, status: 400, code: invalid, fields: []string{"body"}},
		refusal{name: "malformed Idempotency-Key", as: alex, method: http.MethodPost, path: ticketMsgs, body: content("Hello"), header: []string{"Idempotency-Key", "post alex"}, status: 400, code: invalid, fields: []string{"Idempotency-Key"}},
		refusal{name: "dm with an unknown participant", as: alex, method: http.MethodPost, path: "/api/v1/dms", body: dm(random), status: 400, code: invalid, fields: []string{"participant_ids"}},
		refusal{name: "dm with a known and an unknown participant", as: alex, method: http.MethodPost, path: "/api/v1/dms", body: dm(sam.id.String(), random), status: 400, code: invalid, fields: []string{"participant_ids"}},
		refusal{name: "dm with the actor alone", as: alex, method: http.MethodPost, path: "/api/v1/dms", body: dm(alex.id.String()), status: 400, code: invalid, fields: []string{"participant_ids"}},
		refusal{name: "dm without participants", as: alex, method: http.MethodPost, path: "/api/v1/dms", body: `{"participant_ids":[]}`, status: 400, code: invalid, fields: []string{"participant_ids"}},
		refusal{name: "dm over chat.max_dm_participants", as: sam, method: http.MethodPost, path: "/api/v1/dms", body: dm(alex.id.String(), robin.id.String(), w.person(t, "Sam Two", "sam-two").id.String()), status: 400, code: invalid, fields: []string{"participant_ids"}},
		refusal{name: "negative after", as: alex, method: http.MethodGet, path: ticketMsgs + "?after=-1", status: 400, code: invalid, fields: []string{"after"}},

		// 403: Sam reads Support (viewer) and Marketing (member) but may not do these.
		refusal{name: "a person creates a space", as: sam, method: http.MethodPost, path: "/api/v1/spaces", body: name("Sales"), status: 403, code: forbidden},
		refusal{name: "a viewer creates a channel", as: sam, method: http.MethodPost, path: support + "/channels", body: name("chat"), status: 403, code: forbidden},
		refusal{name: "a member creates a channel", as: sam, method: http.MethodPost, path: marketing + "/channels", body: name("chat"), status: 403, code: forbidden},
		refusal{name: "a viewer starts a thread", as: sam, method: http.MethodPost, path: tickets + "/threads", body: content("Hello"), status: 403, code: forbidden},
		refusal{name: "a viewer posts", as: sam, method: http.MethodPost, path: ticketMsgs, body: content("Hello"), status: 403, code: forbidden},
		refusal{name: "a viewer posts too much", as: sam, method: http.MethodPost, path: ticketMsgs, body: content(tooLong), status: 403, code: forbidden},
		refusal{name: "a viewer edits", as: sam, method: http.MethodPatch, path: ticketFirst, body: content("Hello"), status: 403, code: forbidden},
		refusal{name: "a viewer deletes", as: sam, method: http.MethodDelete, path: ticketFirst, status: 403, code: forbidden},
		refusal{name: "a member edits someone else's message", as: sam, method: http.MethodPatch, path: campaignFirst, body: content("Hello"), status: 403, code: forbidden},
		refusal{name: "a member deletes someone else's message", as: sam, method: http.MethodDelete, path: campaignFirst, status: 403, code: forbidden},
		refusal{name: "a viewer archives a channel", as: sam, method: http.MethodPost, path: tickets + "/archive", status: 403, code: forbidden},
		refusal{name: "a member archives a channel", as: sam, method: http.MethodPost, path: campaigns + "/archive", status: 403, code: forbidden},
		refusal{name: "a member archives a space", as: sam, method: http.MethodPost, path: marketing + "/archive", status: 403, code: forbidden},

		// 404: Robin has no grant, so Support does not exist for him; nor does a random id
		// for anyone. Authorization comes before validation, so an invalid body changes nothing.
		refusal{name: "a stranger creates a channel", as: robin, method: http.MethodPost, path: support + "/channels", body: name("robin"), status: 404, code: notFound},
		refusal{name: "a stranger lists a space's channels", as: robin, method: http.MethodGet, path: support + "/channels", status: 404, code: notFound},
		refusal{name: "a stranger starts a thread", as: robin, method: http.MethodPost, path: tickets + "/threads", body: content("Hello"), status: 404, code: notFound},
		refusal{name: "a stranger posts", as: robin, method: http.MethodPost, path: ticketMsgs, body: content("Hello"), status: 404, code: notFound},
		refusal{name: "a stranger posts too much", as: robin, method: http.MethodPost, path: ticketMsgs, body: content(tooLong), status: 404, code: notFound},
		refusal{name: "a stranger edits", as: robin, method: http.MethodPatch, path: ticketFirst, body: content("Hello"), status: 404, code: notFound},
		refusal{name: "a stranger deletes", as: robin, method: http.MethodDelete, path: ticketFirst, status: 404, code: notFound},
		refusal{name: "a stranger archives a channel", as: robin, method: http.MethodPost, path: tickets + "/archive", status: 404, code: notFound},
		refusal{name: "a stranger archives a space", as: robin, method: http.MethodPost, path: support + "/archive", status: 404, code: notFound},
		refusal{name: "the owner posts into no thread", as: alex, method: http.MethodPost, path: "/api/v1/threads/" + random + "/messages", body: content("Hello"), status: 404, code: notFound},
		refusal{name: "the owner edits no message", as: alex, method: http.MethodPatch, path: "/api/v1/messages/" + random, body: content("Hello"), status: 404, code: notFound},
		refusal{name: "the owner creates a channel in no space", as: alex, method: http.MethodPost, path: "/api/v1/spaces/" + random + "/channels", body: name("chat"), status: 404, code: notFound},

		// 409: names are unique per space among channels that are not archived, ignoring case.
		refusal{name: "a taken channel name", as: alex, method: http.MethodPost, path: support + "/channels", body: name("tickets"), status: 409, code: conflict},
		refusal{name: "a taken channel name in other case", as: alex, method: http.MethodPost, path: support + "/channels", body: name(" TICKETS "), status: 409, code: conflict},
		refusal{name: "a taken channel name in other case beyond ASCII", as: alex, method: http.MethodPost, path: support + "/channels", body: name("ÉQUIPE"), status: 409, code: conflict},
		refusal{name: "an Idempotency-Key reused for another message", as: alex, method: http.MethodPost, path: campaignMsgs, body: content("Kick-off at eleven"),
			header: []string{"Idempotency-Key", "post-alex-1"}, status: 409, code: conflict},
	)

	// The same name in another space is no conflict.
	w.channel(t, alex, w.marketing, "tickets")

	// Archive campaigns: it takes no new threads, messages or edits, and its name is free.
	lastSeq := int64(len(w.messages(t, alex, w.campaignThread)))
	w.must(t, alex, http.MethodPost, campaigns+"/archive", "", http.StatusOK, nil)
	w.refuse(t,
		refusal{name: "a thread in an archived channel", as: alex, method: http.MethodPost, path: campaigns + "/threads", body: content("Hello"), status: 409, code: conflict},
		refusal{name: "a post in an archived channel", as: sam, method: http.MethodPost, path: campaignMsgs, body: content("Hello"), status: 409, code: conflict},
		refusal{name: "an edit in an archived channel", as: alex, method: http.MethodPatch, path: campaignFirst, body: content("Hello"), status: 409, code: conflict},
	)
	// The refused post took the thread's next seq under its row lock and rolled it back: the
	// read state, clamped to the thread's newest seq, shows the seq where it was.
	var rs apigen.ReadState
	w.must(t, alex, http.MethodPut, "/api/v1/threads/"+w.campaignThread.String()+"/read-state", `{"last_read_seq":1000}`, http.StatusOK, &rs)
	if rs.LastReadSeq != lastSeq {
		t.Fatalf("the thread's newest seq is %d after a refused post, want %d", rs.LastReadSeq, lastSeq)
	}
	w.channel(t, alex, w.marketing, "Campaigns")

	// Archive Marketing: no new channels.
	w.must(t, alex, http.MethodPost, marketing+"/archive", "", http.StatusOK, nil)
	w.refuse(t, refusal{name: "a channel in an archived space", as: alex, method: http.MethodPost, path: marketing + "/channels", body: name("news"), status: 409, code: conflict})

	// Deleting in an archived channel stays possible.
	h := w.head(t)
	r := w.must(t, alex, http.MethodDelete, campaignFirst, "", http.StatusNoContent, nil)
	w.expectEvents(t, h, r, wantEvent{typ: "message.deleted", kind: kernel.ResourceMessage, id: w.campaignFirstMsg, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: alex.id})

	// The limits are inclusive: 80 characters of name, chat.max_message_bytes bytes of text.
	var long apigen.Channel
	w.must(t, alex, http.MethodPost, support+"/channels", name(strings.Repeat("é", 80)), http.StatusCreated, &long)
	if long.Name == nil || *long.Name != strings.Repeat("é", 80) {
		t.Fatalf("channel name stored as %v", long.Name)
	}
	w.must(t, alex, http.MethodPost, ticketMsgs, content(strings.Repeat("é", maxBytes/2)), http.StatusCreated, nil)
}

// TestInvisibleLikeMissing: Robin, without a grant, gets for every operation on Support's
// space, channel, thread and message exactly the 404 he gets for a random id, body for body
// (request ids aside), and nothing is written; listSpaces shows him nothing. A thread named
// beside a channel it does not lie in is missing too, also for Sam, who can read it.
func TestInvisibleLikeMissing(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	random := uuid.NewString()
	ops := []struct {
		method, path, body string
		as                 worldActor
	}{
		{http.MethodGet, "/api/v1/spaces/%s/channels", "", w.robin},
		{http.MethodPost, "/api/v1/spaces/%s/channels", `{"name":"robin"}`, w.robin},
		{http.MethodPost, "/api/v1/spaces/%s/archive", "", w.robin},
		{http.MethodPost, "/api/v1/channels/%s/threads", `{"content_md":"Hello"}`, w.robin},
		{http.MethodPost, "/api/v1/channels/%s/archive", "", w.robin},
		{http.MethodPut, "/api/v1/channels/%s/draft", `{"content_md":"Half a reply"}`, w.robin},
		{http.MethodDelete, "/api/v1/channels/%s/draft", "", w.robin},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":"Hello"}`, w.robin},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":""}`, w.robin},
		{http.MethodGet, "/api/v1/threads/%s/messages", "", w.robin},
		{http.MethodPut, "/api/v1/threads/%s/read-state", `{"last_read_seq":1}`, w.robin},
		{http.MethodPatch, "/api/v1/messages/%s", `{"content_md":"Hello"}`, w.robin},
		{http.MethodDelete, "/api/v1/messages/%s", "", w.robin},
	}
	existing := map[string]uuid.UUID{"spaces": w.support, "channels": w.tickets, "threads": w.ticketThread, "messages": w.ticketFirstMsg}
	for _, op := range ops {
		kind := strings.Split(op.path, "/")[3]
		h := w.head(t)
		seen := w.do(t, op.as, op.method, fmt.Sprintf(op.path, existing[kind]), op.body)
		missing := w.do(t, op.as, op.method, fmt.Sprintf(op.path, random), op.body)
		seen.RequireProblem(t, http.StatusNotFound, notFound)
		missing.RequireProblem(t, http.StatusNotFound, notFound)
		if a, b := problemBody(t, seen), problemBody(t, missing); a != b {
			t.Fatalf("%s %s: Support's answers\n%s\nbut a random id\n%s", op.method, op.path, a, b)
		}
		w.expectNone(t, h, op.method+" "+op.path)
	}

	var spaces apigen.SpaceViewList
	w.must(t, w.robin, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &spaces)
	if len(spaces.Items) != 0 {
		t.Fatalf("Robin lists %+v, want no space", spaces.Items)
	}

	// A thread of Support named as a thread of Marketing's campaigns: Sam is a member of
	// campaigns and reads the thread, and still gets the 404 of a random thread.
	h := w.head(t)
	body := func(thread string) string { return fmt.Sprintf(`{"content_md":"Half a reply","thread_id":%q}`, thread) }
	elsewhere := w.do(t, w.sam, http.MethodPut, "/api/v1/channels/"+w.campaigns.String()+"/draft", body(w.ticketThread.String()))
	nowhere := w.do(t, w.sam, http.MethodPut, "/api/v1/channels/"+w.campaigns.String()+"/draft", body(random))
	elsewhere.RequireProblem(t, http.StatusNotFound, notFound)
	if a, b := problemBody(t, elsewhere), problemBody(t, nowhere); a != b {
		t.Fatalf("a thread of another channel answers\n%s\nbut a random thread\n%s", a, b)
	}
	gone := w.do(t, w.sam, http.MethodDelete, "/api/v1/channels/"+w.campaigns.String()+"/draft?thread_id="+w.ticketThread.String(), "")
	gone.RequireProblem(t, http.StatusNotFound, notFound)
	w.expectNone(t, h, "drafts of threads in other channels")
}

// TestMessageEditRules: members edit and delete their own messages (member on the message),
// someone else's only as an admin of the channel, here through a space grant (message.update
// and message.delete on the channel); a viewer may not post at all.
func TestMessageEditRules(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	sam, robin := w.sam, w.robin
	msgPath := func(id uuid.UUID) string { return "/api/v1/messages/" + id.String() }

	// Sam, a viewer of Support, reads its thread but may not post into it.
	if got := w.messages(t, sam, w.ticketThread); len(got) != 1 || got[0].ContentMd != w.ticketContent {
		t.Fatalf("Sam reads %+v in tickets", got)
	}
	w.do(t, sam, http.MethodPost, "/api/v1/threads/"+w.ticketThread.String()+"/messages", `{"content_md":"Hello"}`).RequireProblem(t, http.StatusForbidden, forbidden)

	// Sam, a member of Marketing, posts and edits his own message.
	mine := w.post(t, sam, w.campaignThread, "Draft agenda attached")
	h := w.head(t)
	var edited apigen.Message
	r := w.must(t, sam, http.MethodPatch, msgPath(mine.Id), `{"content_md":"Agenda attached"}`, http.StatusOK, &edited)
	if edited.ContentMd != "Agenda attached" || edited.EditedAt == nil || edited.AuthorId != sam.id {
		t.Fatalf("Sam's edit = %+v", edited)
	}
	w.expectEvents(t, h, r, wantEvent{typ: "message.edited", kind: kernel.ResourceMessage, id: mine.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: sam.id})

	// He may not edit or delete Alex's.
	w.refuse(t,
		refusal{name: "Sam edits Alex's message", as: sam, method: http.MethodPatch, path: msgPath(w.campaignFirstMsg), body: `{"content_md":"Mine now"}`, status: 403, code: forbidden},
		refusal{name: "Sam deletes Alex's message", as: sam, method: http.MethodDelete, path: msgPath(w.campaignFirstMsg), status: 403, code: forbidden},
	)

	// Robin, an admin of the space Marketing (and nothing else), moderates: he edits Sam's
	// message and deletes Alex's; the events name Robin as the actor, the author stays.
	w.grant(t, robin, "space", w.marketing, "admin")
	h = w.head(t)
	r = w.must(t, robin, http.MethodPatch, msgPath(mine.Id), `{"content_md":"Agenda attached (moderated)"}`, http.StatusOK, &edited)
	if edited.AuthorId != sam.id {
		t.Fatalf("an admin's edit changed the author to %s", edited.AuthorId)
	}
	ev := w.expectEvents(t, h, r, wantEvent{typ: "message.edited", kind: kernel.ResourceMessage, id: mine.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: robin.id})
	if p := payloadOf(t, ev[0]); p["author_id"] != sam.id.String() {
		t.Fatalf("message.edited by an admin names author %v, want Sam", p["author_id"])
	}
	h = w.head(t)
	r = w.must(t, robin, http.MethodDelete, msgPath(w.campaignFirstMsg), "", http.StatusNoContent, nil)
	w.expectEvents(t, h, r, wantEvent{typ: "message.deleted", kind: kernel.ResourceMessage, id: w.campaignFirstMsg, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: robin.id})

	// Sam reads both changes; Robin still cannot see Support.
	for _, m := range w.messages(t, sam, w.campaignThread) {
		switch m.Id {
		case mine.Id:
			if m.ContentMd != "Agenda attached (moderated)" {
				t.Fatalf("Sam reads his message as %q", m.ContentMd)
			}
		case w.campaignFirstMsg:
			if !m.Redacted {
				t.Fatal("Alex's message is not deleted")
			}
		}
	}
	w.do(t, robin, http.MethodPatch, msgPath(w.ticketFirstMsg), `{"content_md":"Hello"}`).RequireProblem(t, http.StatusNotFound, notFound)

	// Sam deletes his own message.
	h = w.head(t)
	r = w.must(t, sam, http.MethodDelete, msgPath(mine.Id), "", http.StatusNoContent, nil)
	w.expectEvents(t, h, r, wantEvent{typ: "message.deleted", kind: kernel.ResourceMessage, id: mine.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: sam.id})
}

// TestMentionsOnlyOfReaders: @handle mentions are recorded only for principals who may read
// the channel when the message is posted or edited; Robin here is an agent.
func TestMentionsOnlyOfReaders(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, true)
	alex, sam, robin := w.alex, w.sam, w.robin
	const text = "@sam @robin @nobody the printer again (alex@example.com)"

	// Sam reads Support (viewer); Robin holds no grant; nobody is no principal; an e-mail
	// address mentions nobody.
	h := w.head(t)
	var m apigen.Message
	r := w.must(t, alex, http.MethodPost, "/api/v1/threads/"+w.ticketThread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, text), http.StatusCreated, &m)
	if fmt.Sprint(m.MentionIds) != fmt.Sprint([]uuid.UUID{sam.id}) {
		t.Fatalf("mention_ids = %v, want only Sam %s", m.MentionIds, sam.id)
	}
	ev := w.expectEvents(t, h, r,
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: m.Id, space: w.support, channel: w.tickets, thread: w.ticketThread, actor: alex.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: w.ticketThread, space: w.support, channel: w.tickets, thread: w.ticketThread, actor: alex.id, audience: alex.id})
	if got := payloadOf(t, ev[0])["mention_ids"]; fmt.Sprint(got) != fmt.Sprint(idStrings(sam.id)) {
		t.Fatalf("message.created mention_ids = %v, want only Sam", got)
	}

	// A grant on the channel lets Robin read it: the edit records him too.
	w.grant(t, robin, "channel", w.tickets, "viewer")
	h = w.head(t)
	r = w.must(t, alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), fmt.Sprintf(`{"content_md":%q}`, text+" "), http.StatusOK, &m)
	want := sortedIDs(sam.id, robin.id)
	if fmt.Sprint(m.MentionIds) != fmt.Sprint(want) {
		t.Fatalf("mention_ids after the grant = %v, want %v", m.MentionIds, want)
	}
	ev = w.expectEvents(t, h, r, wantEvent{typ: "message.edited", kind: kernel.ResourceMessage, id: m.Id, space: w.support, channel: w.tickets, thread: w.ticketThread, actor: alex.id})
	if got := payloadOf(t, ev[0])["mention_ids"]; fmt.Sprint(got) != fmt.Sprint(idStrings(want...)) {
		t.Fatalf("message.edited mention_ids = %v, want %v", got, want)
	}
	if got := w.messages(t, robin, w.ticketThread); fmt.Sprint(got[len(got)-1].MentionIds) != fmt.Sprint(want) {
		t.Fatalf("listMessages shows mention_ids %v, want %v", got[len(got)-1].MentionIds, want)
	}

	// In a direct message of Alex and Sam only its participants can be mentioned.
	var dm apigen.Channel
	w.must(t, alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, sam.id), http.StatusCreated, &dm)
	th := w.thread(t, alex, dm.Id, "@robin @sam lunch?")
	if fmt.Sprint(th.FirstMessage.MentionIds) != fmt.Sprint([]uuid.UUID{sam.id}) {
		t.Fatalf("mentions in a dm = %v, want only Sam", th.FirstMessage.MentionIds)
	}
}

// TestListingsShowLevelAndCapabilities: listSpaces and listSpaceChannels show each actor the
// spaces and channels it may read that are not archived, with its effective role there
// (level) and the actions it may perform (capabilities, sorted).
func TestListingsShowLevelAndCapabilities(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, true)
	alex, sam, robin := w.alex, w.sam, w.robin
	news := w.channel(t, alex, w.marketing, "news")
	w.grant(t, sam, "channel", news, "admin")
	w.grant(t, robin, "channel", w.campaigns, "member")
	old := w.channel(t, alex, w.support, "old-tickets")
	w.must(t, alex, http.MethodPost, "/api/v1/channels/"+old.String()+"/archive", "", http.StatusOK, nil)
	archived := w.space(t, "Archive")
	w.must(t, alex, http.MethodPost, "/api/v1/spaces/"+archived.String()+"/archive", "", http.StatusOK, nil)

	spaceAdmin := "channel.create grant.admin space.archive space.update"
	channelAdmin := "channel.archive channel.update draft.write grant.admin message.create readstate.write thread.create"
	member := "draft.write message.create readstate.write thread.create"
	type item struct{ name, level, caps string }
	spaces := func(a worldActor) []item {
		var list apigen.SpaceViewList
		w.must(t, a, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &list)
		out := make([]item, len(list.Items))
		for i, s := range list.Items {
			out[i] = item{name: s.Name, caps: capStrings(s.Capabilities)}
			if s.Level != nil {
				out[i].level = string(*s.Level)
			}
		}
		return out
	}
	channels := func(a worldActor, space uuid.UUID) []item {
		var list apigen.ChannelViewList
		w.must(t, a, http.MethodGet, "/api/v1/spaces/"+space.String()+"/channels", "", http.StatusOK, &list)
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
		{"Support's channels for Alex", channels(alex, w.support), []item{{"tickets", "owner", channelAdmin}}},
		{"Support's channels for Sam", channels(sam, w.support), []item{{"tickets", "viewer", ""}}},
		{"Marketing's channels for Alex", channels(alex, w.marketing), []item{{"campaigns", "owner", channelAdmin}, {"news", "owner", channelAdmin}}},
		{"Marketing's channels for Sam", channels(sam, w.marketing), []item{{"campaigns", "member", member}, {"news", "admin", channelAdmin}}},
		{"Marketing's channels for Robin", channels(robin, w.marketing), []item{{"campaigns", "member", member}}},
	} {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Fatalf("%s:\n got  %v\n want %v", tc.what, tc.got, tc.want)
		}
	}
	w.do(t, robin, http.MethodGet, "/api/v1/spaces/"+w.support.String()+"/channels", "").RequireProblem(t, http.StatusNotFound, notFound)
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
	w := newChatWorld(t, false)
	w.grant(t, w.robin, "space", w.marketing, "member")
	posters := []worldActor{w.alex, w.sam, w.robin}
	const clients, perClient = 8, 4
	start := w.head(t)

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
	path := "/api/v1/threads/" + w.campaignThread.String() + "/messages"
	httpc := w.env.Server.Client()
	for c := range clients {
		results[c] = make([]result, perClient)
		a := posters[c%len(posters)]
		for i := range perClient {
			req := w.env.Client.NewRequest(http.MethodPost, path, strings.NewReader(fmt.Sprintf(`{"content_md":"client %d, post %d"}`, c, i)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.token)
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
	list := w.messages(t, w.alex, w.campaignThread)
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
		w.must(t, w.sam, http.MethodGet, fmt.Sprintf("%s?after=%d&limit=10", path, after), "", http.StatusOK, &page)
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
	events := w.eventsAfter(t, start)
	for i, e := range events {
		if e.Type == "read_state.updated" {
			if i == 0 {
				t.Fatalf("event %d is a read state before any post", e.Seq)
			}
			prev := events[i-1]
			if prev.Type != "message.created" || e.AudienceID != prev.ActorID || e.ActorID != prev.ActorID ||
				payloadOf(t, e)["last_read_seq"] != payloadOf(t, prev)["seq"] {
				t.Fatalf("event %d is a read state that follows no own post of its owner", e.Seq)
			}
			continue
		}
		if e.Type != "message.created" || e.ResourceID != bySeq[int64(len(logged)+2)].Id {
			t.Fatalf("event %d is %s of %s, want message.created of seq %d", e.Seq, e.Type, e.ResourceID, len(logged)+2)
		}
		seq, err := payloadOf(t, e)["seq"].(json.Number).Int64()
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
	w := newChatWorld(t, false)
	path := "/api/v1/threads/" + w.campaignThread.String() + "/messages"
	const body = `{"content_md":"Budget approved, @sam"}`
	h := w.head(t)
	first := w.must(t, w.alex, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")
	retry := w.must(t, w.alex, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "post-alex-1")
	if first.Header.Get("Idempotency-Replayed") != "" || retry.Header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("Idempotency-Replayed = %q then %q, want none then true", first.Header.Get("Idempotency-Replayed"), retry.Header.Get("Idempotency-Replayed"))
	}
	if string(first.Body) != string(retry.Body) {
		t.Fatalf("the retry answered\n%s\nnot the first\n%s", retry.Body, first.Body)
	}
	var m apigen.Message
	first.JSON(t, &m)
	// One message.created and Alex's own read state, of the first request.
	w.expectEvents(t, h, first,
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: m.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: w.alex.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: w.campaignThread, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: w.alex.id, audience: w.alex.id})
	// One message.
	list := w.messages(t, w.sam, w.campaignThread)
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
	h = w.head(t)
	var sams apigen.Message
	r := w.must(t, w.sam, http.MethodPost, path, body, http.StatusCreated, &sams, "Idempotency-Key", "post-alex-1")
	if r.Header.Get("Idempotency-Replayed") != "" || sams.Id == m.Id || sams.Seq != 3 {
		t.Fatalf("Sam's post with Alex's key = %+v (replayed %q), want a new message", sams, r.Header.Get("Idempotency-Replayed"))
	}
	w.expectEvents(t, h, r,
		wantEvent{typ: "message.created", kind: kernel.ResourceMessage, id: sams.Id, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: w.sam.id},
		wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: w.campaignThread, space: w.marketing, channel: w.campaigns, thread: w.campaignThread, actor: w.sam.id, audience: w.sam.id})
}

// TestDirectMessageOnePerParticipantSet: Alex and Sam open their direct message at the same
// moment from both sides; one request creates it (201), the other gets it (200), and the log
// has one channel.created and one member grant per participant. Only the participants see
// it: Robin gets 404 for its thread as for a random one.
func TestDirectMessageOnePerParticipantSet(t *testing.T) {
	t.Parallel()
	w := newPeople(t, false)
	start := w.head(t)
	type result struct {
		req    *http.Request
		status int
		header http.Header
		body   []byte
		err    error
	}
	sides := []struct {
		from worldActor
		to   uuid.UUID
	}{{w.alex, w.sam.id}, {w.sam, w.alex.id}, {w.alex, w.sam.id}, {w.sam, w.alex.id}}
	results := make([]result, len(sides))
	begin := make(chan struct{})
	var wg sync.WaitGroup
	httpc := w.env.Server.Client()
	for i, s := range sides {
		req := w.env.Client.NewRequest(http.MethodPost, "/api/v1/dms", strings.NewReader(fmt.Sprintf(`{"participant_ids":[%q]}`, s.to)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.from.token)
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
	for _, e := range w.eventsAfter(t, start) {
		counts[e.Type]++
	}
	if fmt.Sprint(counts) != "map[channel.created:1 grant.created:2 permissions.changed:2]" {
		t.Fatalf("the log has %v, want one channel.created and two grants", counts)
	}

	// The participants post; Robin sees nothing of it.
	th := w.thread(t, w.sam, dm, "Lunch at noon?")
	w.post(t, w.alex, th.Id, "Yes")
	random := uuid.NewString()
	for _, op := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/threads/%s/messages", ""},
		{http.MethodPost, "/api/v1/threads/%s/messages", `{"content_md":"Me too"}`},
		{http.MethodPut, "/api/v1/threads/%s/read-state", `{"last_read_seq":2}`},
	} {
		seen := w.do(t, w.robin, op.method, fmt.Sprintf(op.path, th.Id), op.body)
		missing := w.do(t, w.robin, op.method, fmt.Sprintf(op.path, random), op.body)
		seen.RequireProblem(t, http.StatusNotFound, notFound)
		if a, b := problemBody(t, seen), problemBody(t, missing); a != b {
			t.Fatalf("%s %s: the dm's thread answers Robin\n%s\nbut a random id\n%s", op.method, op.path, a, b)
		}
	}
	w.do(t, w.robin, http.MethodPost, "/api/v1/channels/"+dm.String()+"/threads", `{"content_md":"Hi"}`).RequireProblem(t, http.StatusNotFound, notFound)
}
