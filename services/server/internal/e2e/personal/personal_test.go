package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire/wiretest"
)

// TestPersonalDataAppendsItsEvents writes every kind of personal data over HTTP: each write
// appends exactly its personal event, caused by and addressed to the owner alone (audience),
// placed where the data lies (the thread of a read state, the channel and thread of a draft,
// nowhere for settings and the sidebar), with the register's payload and the row's new
// version; deleting a draft that does not exist appends nothing.
func TestPersonalDataAppendsItsEvents(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	sam := w.sam
	w.post(t, w.alex, w.campaignThread, "Second")
	w.post(t, w.alex, w.campaignThread, "Third")
	thread, channel, space := w.campaignThread, w.campaigns, w.marketing
	readState := "/api/v1/threads/" + thread.String() + "/read-state"
	draft := "/api/v1/channels/" + channel.String() + "/draft"

	// updateReadState: clamped to the thread's newest seq (3); it may go back.
	h := w.head(t)
	var rs apigen.ReadState
	r := w.must(t, sam, http.MethodPut, readState, `{"last_read_seq":99}`, http.StatusOK, &rs)
	if rs.LastReadSeq != 3 || rs.Version != 1 || rs.ThreadId != thread || rs.ChannelId != channel {
		t.Fatalf("updateReadState = %+v, want last_read_seq 3 at version 1", rs)
	}
	readEvent := wantEvent{typ: "read_state.updated", kind: kernel.ResourceThread, id: thread, space: space, channel: channel, thread: thread, actor: sam.id, audience: sam.id}
	ev := w.expectEvents(t, h, r, readEvent)
	requirePayload(t, ev[0], map[string]any{"thread_id": thread.String(), "channel_id": channel.String(), "last_read_seq": 3, "version": 1})
	h = w.head(t)
	r = w.must(t, sam, http.MethodPut, readState, `{"last_read_seq":1}`, http.StatusOK, &rs)
	ev = w.expectEvents(t, h, r, readEvent)
	requirePayload(t, ev[0], map[string]any{"thread_id": thread.String(), "channel_id": channel.String(), "last_read_seq": 1, "version": 2})

	// saveDraft of the channel: on the channel, in no thread.
	h = w.head(t)
	var d apigen.Draft
	r = w.must(t, sam, http.MethodPut, draft, `{"content_md":"Half a reply"}`, http.StatusOK, &d)
	if d.ContentMd != "Half a reply" || d.Version != 1 || d.ThreadId != nil {
		t.Fatalf("saveDraft = %+v", d)
	}
	channelDraft := wantEvent{typ: "draft.saved", kind: kernel.ResourceChannel, id: channel, space: space, channel: channel, actor: sam.id, audience: sam.id}
	ev = w.expectEvents(t, h, r, channelDraft)
	requirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "content_md": "Half a reply", "version": 1})
	h = w.head(t)
	r = w.must(t, sam, http.MethodPut, draft, `{"content_md":"Most of a reply"}`, http.StatusOK, &d)
	ev = w.expectEvents(t, h, r, channelDraft)
	requirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "content_md": "Most of a reply", "version": 2})

	// saveDraft of a thread of the channel: placed in the thread too.
	h = w.head(t)
	r = w.must(t, sam, http.MethodPut, draft, fmt.Sprintf(`{"content_md":"Agreed","thread_id":%q}`, thread), http.StatusOK, &d)
	if d.ThreadId == nil || *d.ThreadId != thread || d.Version != 1 {
		t.Fatalf("saveDraft of the thread = %+v", d)
	}
	threadDraft := channelDraft
	threadDraft.thread = thread
	ev = w.expectEvents(t, h, r, threadDraft)
	requirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "thread_id": thread.String(), "content_md": "Agreed", "version": 1})

	// deleteDraft: draft.deleted with the version after the deleted one; again: nothing.
	h = w.head(t)
	r = w.must(t, sam, http.MethodDelete, draft+"?thread_id="+thread.String(), "", http.StatusNoContent, nil)
	threadDraft.typ = "draft.deleted"
	ev = w.expectEvents(t, h, r, threadDraft)
	requirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "thread_id": thread.String(), "version": 2})
	h = w.head(t)
	r = w.must(t, sam, http.MethodDelete, draft, "", http.StatusNoContent, nil)
	channelDraft.typ = "draft.deleted"
	ev = w.expectEvents(t, h, r, channelDraft)
	requirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "version": 3})
	h = w.head(t)
	w.must(t, sam, http.MethodDelete, draft, "", http.StatusNoContent, nil)
	w.must(t, sam, http.MethodDelete, draft+"?thread_id="+thread.String(), "", http.StatusNoContent, nil)
	w.expectNone(t, h, "deleting drafts that do not exist")

	// putSetting: on the owner's principal, nowhere else; the value stored normalized
	// (compact, duplicate names collapsed, the last one winning).
	h = w.head(t)
	var st apigen.UserSetting
	r = w.must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":{"mode":"dark", "accent":["teal",1.5,true], "mode":"light"}}`, http.StatusOK, &st)
	var value map[string]any
	if err := json.Unmarshal(st.Value, &value); err != nil {
		t.Fatal(err)
	}
	if st.Key != "theme" || st.Version != 1 || fmt.Sprint(value) != "map[accent:[teal 1.5 true] mode:light]" || strings.ContainsAny(string(st.Value), " \n") {
		t.Fatalf("putSetting = %s %s version %d, want the compact value with mode light at version 1", st.Key, st.Value, st.Version)
	}
	settingEvent := wantEvent{typ: "setting.updated", kind: kernel.ResourcePrincipal, id: sam.id, actor: sam.id, audience: sam.id}
	ev = w.expectEvents(t, h, r, settingEvent)
	requirePayload(t, ev[0], map[string]any{"key": "theme", "value": map[string]any{"accent": []any{"teal", 1.5, true}, "mode": "light"}, "version": 1})
	h = w.head(t)
	r = w.must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"light"}`, http.StatusOK, &st)
	ev = w.expectEvents(t, h, r, settingEvent)
	requirePayload(t, ev[0], map[string]any{"key": "theme", "value": "light", "version": 2})

	// Settings are per owner: Alex's theme is his own, at version 1; Robin, without any grant,
	// keeps settings too.
	for _, a := range []worldActor{w.alex, w.robin} {
		h = w.head(t)
		r = w.must(t, a, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, &st)
		if st.Version != 1 {
			t.Fatalf("%s's first theme is at version %d", a.name, st.Version)
		}
		w.expectEvents(t, h, r, wantEvent{typ: "setting.updated", kind: kernel.ResourcePrincipal, id: a.id, actor: a.id, audience: a.id})
	}

	// putSidebar: the sections as given, duplicates within a section dropped; channel ids are
	// stored as given, also one Sam cannot read (delivery filters them).
	var dm apigen.Channel
	w.must(t, w.alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.robin.id), http.StatusCreated, &dm)
	h = w.head(t)
	var sb apigen.SidebarState
	body := fmt.Sprintf(`{"sections":[{"key":"favourites","title":"Favourites","collapsed":false,"channel_ids":[%q,%q,%q]},{"key":"later","title":"","collapsed":true,"channel_ids":[]}]}`,
		channel, dm.Id, channel)
	r = w.must(t, sam, http.MethodPut, "/api/v1/me/sidebar", body, http.StatusOK, &sb)
	if sb.Version != 1 || len(sb.Sections) != 2 || fmt.Sprint(sb.Sections[0].ChannelIds) != fmt.Sprint([]uuid.UUID{channel, dm.Id}) || !sb.Sections[1].Collapsed {
		t.Fatalf("putSidebar = %+v", sb)
	}
	ev = w.expectEvents(t, h, r, wantEvent{typ: "sidebar.updated", kind: kernel.ResourcePrincipal, id: sam.id, actor: sam.id, audience: sam.id})
	requirePayload(t, ev[0], map[string]any{
		"sections": []any{
			map[string]any{"channel_ids": idStrings(channel, dm.Id), "collapsed": false, "key": "favourites", "title": "Favourites"},
			map[string]any{"channel_ids": []any{}, "collapsed": true, "key": "later", "title": ""},
		},
		"version": 1,
	})
	h = w.head(t)
	r = w.must(t, sam, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[]}`, http.StatusOK, &sb)
	if sb.Version != 2 || len(sb.Sections) != 0 {
		t.Fatalf("the emptied sidebar = %+v", sb)
	}
	ev = w.expectEvents(t, h, r, wantEvent{typ: "sidebar.updated", kind: kernel.ResourcePrincipal, id: sam.id, actor: sam.id, audience: sam.id})
	requirePayload(t, ev[0], map[string]any{"sections": []any{}, "version": 2})
}

// TestPersonalDataRefusalsAppendNothing sends personal-data writes that fail validation
// (400 naming the field), authorization (403 for a viewer, who keeps no read state or draft;
// 404 for what the actor cannot see) or the state (409 for a draft in an archived channel),
// and checks that none appends anything. A draft saved before its channel was archived can
// still be deleted.
func TestPersonalDataRefusalsAppendNothing(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false,
		wiretest.WithSetting(syncapp.KeyMaxSettingBytes, "64"),
		wiretest.WithSetting(syncapp.KeyMaxDraftBytes, "32"))
	alex, sam, robin := w.alex, w.sam, w.robin
	campaignsDraft := "/api/v1/channels/" + w.campaigns.String() + "/draft"
	ticketsDraft := "/api/v1/channels/" + w.tickets.String() + "/draft"
	campaignRead := "/api/v1/threads/" + w.campaignThread.String() + "/read-state"
	ticketRead := "/api/v1/threads/" + w.ticketThread.String() + "/read-state"
	setting := func(key string) string { return "/api/v1/me/settings/" + key }
	sidebar := func(sections ...string) string { return `{"sections":[` + strings.Join(sections, ",") + `]}` }
	section := func(key, title string) string {
		return fmt.Sprintf(`{"key":%q,"title":%q,"collapsed":false,"channel_ids":[]}`, key, title)
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = section(fmt.Sprintf("s%d", i), "")
	}
	random := uuid.NewString()

	w.refuse(t,
		// Validation.
		refusal{name: "negative last_read_seq", as: sam, method: http.MethodPut, path: campaignRead, body: `{"last_read_seq":-1}`, status: 400, code: invalid, fields: []string{"last_read_seq"}},
		refusal{name: "empty draft", as: sam, method: http.MethodPut, path: campaignsDraft, body: `{"content_md":""}`, status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "draft over sync.max_draft_bytes", as: sam, method: http.MethodPut, path: campaignsDraft, body: fmt.Sprintf(`{"content_md":%q}`, strings.Repeat("d", 33)), status: 400, code: invalid, fields: []string{"content_md"}},
		refusal{name: "setting key with a capital", as: sam, method: http.MethodPut, path: setting("Theme"), body: `{"value":"dark"}`, status: 400, code: invalid, fields: []string{"key"}},
		refusal{name: "setting key starting with a digit", as: sam, method: http.MethodPut, path: setting("1theme"), body: `{"value":"dark"}`, status: 400, code: invalid, fields: []string{"key"}},
		refusal{name: "setting key of 65 characters", as: sam, method: http.MethodPut, path: setting(strings.Repeat("k", 65)), body: `{"value":"dark"}`, status: 400, code: invalid, fields: []string{"key"}},
		refusal{name: "null setting value", as: sam, method: http.MethodPut, path: setting("theme"), body: `{"value":null}`, status: 400, code: invalid, fields: []string{"value"}},
		refusal{name: "null inside a setting value", as: sam, method: http.MethodPut, path: setting("theme"), body: `{"value":{"mode":"dark","accent":[1,null]}}`, status: 400, code: invalid, fields: []string{"value"}},
		refusal{name: "setting without a value", as: sam, method: http.MethodPut, path: setting("theme"), body: `{}`, status: 400, code: invalid, fields: []string{"value"}},
		refusal{name: "setting value over sync.max_setting_bytes", as: sam, method: http.MethodPut, path: setting("theme"), body: fmt.Sprintf(`{"value":%q}`, strings.Repeat("v", 64)), status: 400, code: invalid, fields: []string{"value"}},
		refusal{name: "bad key and null value at once", as: sam, method: http.MethodPut, path: setting("Theme"), body: `{"value":null}`, status: 400, code: invalid, fields: []string{"key", "value"}},
		refusal{name: "sidebar with a duplicate section key", as: sam, method: http.MethodPut, path: "/api/v1/me/sidebar", body: sidebar(section("a", "A"), section("a", "B")), status: 400, code: invalid, fields: []string{"sections"}},
		refusal{name: "sidebar of 51 sections", as: sam, method: http.MethodPut, path: "/api/v1/me/sidebar", body: sidebar(many...), status: 400, code: invalid, fields: []string{"sections"}},
		refusal{name: "sidebar section title of 81 characters", as: sam, method: http.MethodPut, path: "/api/v1/me/sidebar", body: sidebar(section("a", strings.Repeat("t", 81))), status: 400, code: invalid, fields: []string{"sections"}},
		refusal{name: "sidebar section without a key", as: sam, method: http.MethodPut, path: "/api/v1/me/sidebar", body: sidebar(section("", "A")), status: 400, code: invalid, fields: []string{"sections"}},

		// 403: Sam is a viewer of Support: he reads it but keeps no personal data there.
		refusal{name: "a viewer's read state", as: sam, method: http.MethodPut, path: ticketRead, body: `{"last_read_seq":1}`, status: 403, code: forbidden},
		refusal{name: "a viewer's draft", as: sam, method: http.MethodPut, path: ticketsDraft, body: `{"content_md":"Hello"}`, status: 403, code: forbidden},
		refusal{name: "a viewer's draft deleted", as: sam, method: http.MethodDelete, path: ticketsDraft, status: 403, code: forbidden},

		// 404: Robin cannot see Support; nobody sees a random thread or channel.
		refusal{name: "a stranger's read state", as: robin, method: http.MethodPut, path: ticketRead, body: `{"last_read_seq":1}`, status: 404, code: notFound},
		refusal{name: "a stranger's draft", as: robin, method: http.MethodPut, path: ticketsDraft, body: `{"content_md":"Hello"}`, status: 404, code: notFound},
		refusal{name: "a stranger's draft deleted", as: robin, method: http.MethodDelete, path: ticketsDraft, status: 404, code: notFound},
		refusal{name: "a read state of no thread", as: alex, method: http.MethodPut, path: "/api/v1/threads/" + random + "/read-state", body: `{"last_read_seq":1}`, status: 404, code: notFound},
		refusal{name: "a draft in no channel", as: alex, method: http.MethodPut, path: "/api/v1/channels/" + random + "/draft", body: `{"content_md":"Hello"}`, status: 404, code: notFound},
		refusal{name: "a draft of a thread of another channel", as: sam, method: http.MethodPut, path: campaignsDraft,
			body: fmt.Sprintf(`{"content_md":"Hello","thread_id":%q}`, w.ticketThread), status: 404, code: notFound},
	)

	// A draft in campaigns, then campaigns archived: no new draft (409), but the old one can
	// be deleted.
	w.must(t, sam, http.MethodPut, campaignsDraft, `{"content_md":"Before the archive"}`, http.StatusOK, nil)
	w.must(t, alex, http.MethodPost, "/api/v1/channels/"+w.campaigns.String()+"/archive", "", http.StatusOK, nil)
	w.refuse(t,
		refusal{name: "a draft in an archived channel", as: sam, method: http.MethodPut, path: campaignsDraft, body: `{"content_md":"After the archive"}`, status: 409, code: conflict},
		refusal{name: "a thread's draft in an archived channel", as: sam, method: http.MethodPut, path: campaignsDraft,
			body: fmt.Sprintf(`{"content_md":"After the archive","thread_id":%q}`, w.campaignThread), status: 409, code: conflict},
	)
	h := w.head(t)
	r := w.must(t, sam, http.MethodDelete, campaignsDraft, "", http.StatusNoContent, nil)
	w.expectEvents(t, h, r, wantEvent{typ: "draft.deleted", kind: kernel.ResourceChannel, id: w.campaigns, space: w.marketing, channel: w.campaigns, actor: sam.id, audience: sam.id})

	// The limits are inclusive.
	w.must(t, sam, http.MethodPut, setting("a"+strings.Repeat("k", 63)), fmt.Sprintf(`{"value":%q}`, strings.Repeat("v", 62)), http.StatusOK, nil)
	w.must(t, alex, http.MethodPut, ticketsDraft, fmt.Sprintf(`{"content_md":%q}`, strings.Repeat("d", 32)), http.StatusOK, nil)
}

// TestSidebarAndDirectMessagesDeliveredToReaders: a sidebar is stored with the channel ids as
// given, also ids its owner cannot read, and delivered (getSnapshot) without them; a direct
// message is in the snapshot of its participants only, not in the owner's, whose role could
// read it.
func TestSidebarAndDirectMessagesDeliveredToReaders(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	var alexRobin, samRobin apigen.Channel
	w.must(t, w.alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.robin.id), http.StatusCreated, &alexRobin)
	w.must(t, w.sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.robin.id), http.StatusCreated, &samRobin)
	random := uuid.New()

	given := []uuid.UUID{w.campaigns, alexRobin.Id, random, w.tickets, samRobin.Id}
	var sb apigen.SidebarState
	list, err := json.Marshal(given)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"sections":[{"key":"all","title":"All","collapsed":false,"channel_ids":%s}]}`, list)
	w.must(t, w.sam, http.MethodPut, "/api/v1/me/sidebar", body, http.StatusOK, &sb)
	if fmt.Sprint(sb.Sections[0].ChannelIds) != fmt.Sprint(given) {
		t.Fatalf("the sidebar was stored as %v, want %v as given", sb.Sections[0].ChannelIds, given)
	}

	snapshot := func(a worldActor) apigen.Snapshot {
		var s apigen.Snapshot
		w.must(t, a, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &s)
		return s
	}
	channelIDs := func(s apigen.Snapshot) map[uuid.UUID]bool {
		out := map[uuid.UUID]bool{}
		for _, c := range s.Channels {
			out[c.Id] = true
		}
		return out
	}
	sams := snapshot(w.sam)
	if got, want := fmt.Sprint(sams.Sidebar.Sections[0].ChannelIds), fmt.Sprint([]uuid.UUID{w.campaigns, w.tickets, samRobin.Id}); got != want {
		t.Fatalf("Sam's delivered sidebar holds %s, want %s", got, want)
	}
	if ch := channelIDs(sams); !ch[samRobin.Id] || ch[alexRobin.Id] {
		t.Fatalf("Sam's snapshot channels %v: want his direct message, not Alex's", sams.Channels)
	}
	if ch := channelIDs(snapshot(w.alex)); !ch[alexRobin.Id] || ch[samRobin.Id] {
		t.Fatal("the owner's snapshot lists a direct message he does not take part in, or misses his own")
	}
	if ch := channelIDs(snapshot(w.robin)); !ch[alexRobin.Id] || !ch[samRobin.Id] || ch[w.tickets] {
		t.Fatal("Robin's snapshot does not list exactly his direct messages")
	}
}
