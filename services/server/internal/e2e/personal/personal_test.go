package personal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wiretest"
)

// TestPersonalDataAppendsItsEvents writes every kind of personal data over HTTP: each write
// appends exactly its personal event, caused by and addressed to the owner alone (audience),
// placed where the data lies (the thread of a read state, the channel and thread of a draft,
// nowhere for settings and the sidebar), with the register's payload and the row's new
// version; deleting a draft that does not exist appends nothing.
func TestPersonalDataAppendsItsEvents(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	sam := w.Sam
	w.Post(t, w.Alex, w.CampaignThread, "Second")
	w.Post(t, w.Alex, w.CampaignThread, "Third")
	thread, channel, space := w.CampaignThread, w.Campaigns, w.Marketing
	readState := "/api/v1/threads/" + thread.String() + "/read-state"
	draft := "/api/v1/channels/" + channel.String() + "/draft"

	// updateReadState: clamped to the thread's newest seq (3); it may go back.
	h := w.Head(t)
	var rs apigen.ReadState
	r := w.Must(t, sam, http.MethodPut, readState, `{"last_read_seq":99}`, http.StatusOK, &rs)
	if rs.LastReadSeq != 3 || rs.Version != 1 || rs.ThreadId != thread || rs.ChannelId != channel {
		t.Fatalf("updateReadState = %+v, want last_read_seq 3 at version 1", rs)
	}
	readEvent := e2etest.WantEvent{Typ: "read_state.updated", Kind: kernel.ResourceThread, ID: thread, Space: space, Channel: channel, Thread: thread, Actor: sam.ID, Audience: sam.ID}
	ev := w.ExpectEvents(t, h, r, readEvent)
	e2etest.RequirePayload(t, ev[0], map[string]any{"thread_id": thread.String(), "channel_id": channel.String(), "last_read_seq": 3, "version": 1})
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPut, readState, `{"last_read_seq":1}`, http.StatusOK, &rs)
	ev = w.ExpectEvents(t, h, r, readEvent)
	e2etest.RequirePayload(t, ev[0], map[string]any{"thread_id": thread.String(), "channel_id": channel.String(), "last_read_seq": 1, "version": 2})

	// saveDraft of the channel: on the channel, in no thread.
	h = w.Head(t)
	var d apigen.Draft
	r = w.Must(t, sam, http.MethodPut, draft, `{"content_md":"Half a reply"}`, http.StatusOK, &d)
	if d.ContentMd != "Half a reply" || d.Version != 1 || d.ThreadId != nil {
		t.Fatalf("saveDraft = %+v", d)
	}
	channelDraft := e2etest.WantEvent{Typ: "draft.saved", Kind: kernel.ResourceChannel, ID: channel, Space: space, Channel: channel, Actor: sam.ID, Audience: sam.ID}
	ev = w.ExpectEvents(t, h, r, channelDraft)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "content_md": "Half a reply", "version": 1})
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPut, draft, `{"content_md":"Most of a reply"}`, http.StatusOK, &d)
	ev = w.ExpectEvents(t, h, r, channelDraft)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "content_md": "Most of a reply", "version": 2})

	// saveDraft of a thread of the channel: placed in the thread too.
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPut, draft, fmt.Sprintf(`{"content_md":"Agreed","thread_id":%q}`, thread), http.StatusOK, &d)
	if d.ThreadId == nil || *d.ThreadId != thread || d.Version != 1 {
		t.Fatalf("saveDraft of the thread = %+v", d)
	}
	threadDraft := channelDraft
	threadDraft.Thread = thread
	ev = w.ExpectEvents(t, h, r, threadDraft)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "thread_id": thread.String(), "content_md": "Agreed", "version": 1})

	// deleteDraft: draft.deleted with the version after the deleted one; again: nothing.
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodDelete, draft+"?thread_id="+thread.String(), "", http.StatusNoContent, nil)
	threadDraft.Typ = "draft.deleted"
	ev = w.ExpectEvents(t, h, r, threadDraft)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "thread_id": thread.String(), "version": 2})
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodDelete, draft, "", http.StatusNoContent, nil)
	channelDraft.Typ = "draft.deleted"
	ev = w.ExpectEvents(t, h, r, channelDraft)
	e2etest.RequirePayload(t, ev[0], map[string]any{"channel_id": channel.String(), "version": 3})
	h = w.Head(t)
	w.Must(t, sam, http.MethodDelete, draft, "", http.StatusNoContent, nil)
	w.Must(t, sam, http.MethodDelete, draft+"?thread_id="+thread.String(), "", http.StatusNoContent, nil)
	w.ExpectNone(t, h, "deleting drafts that do not exist")

	// putSetting: on the owner's principal, nowhere else; the value stored normalized
	// (compact, duplicate names collapsed, the last one winning).
	h = w.Head(t)
	var st apigen.UserSetting
	r = w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":{"mode":"dark", "accent":["teal",1.5,true], "mode":"light"}}`, http.StatusOK, &st)
	var value map[string]any
	if err := json.Unmarshal(st.Value, &value); err != nil {
		t.Fatal(err)
	}
	if st.Key != "theme" || st.Version != 1 || fmt.Sprint(value) != "map[accent:[teal 1.5 true] mode:light]" || strings.ContainsAny(string(st.Value), " \n") {
		t.Fatalf("putSetting = %s %s version %d, want the compact value with mode light at version 1", st.Key, st.Value, st.Version)
	}
	settingEvent := e2etest.WantEvent{Typ: "setting.updated", Kind: kernel.ResourcePrincipal, ID: sam.ID, Actor: sam.ID, Audience: sam.ID}
	ev = w.ExpectEvents(t, h, r, settingEvent)
	e2etest.RequirePayload(t, ev[0], map[string]any{"key": "theme", "value": map[string]any{"accent": []any{"teal", 1.5, true}, "mode": "light"}, "version": 1})
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"light"}`, http.StatusOK, &st)
	ev = w.ExpectEvents(t, h, r, settingEvent)
	e2etest.RequirePayload(t, ev[0], map[string]any{"key": "theme", "value": "light", "version": 2})

	// Settings are per owner: Alex's theme is his own, at version 1; Robin, without any grant,
	// keeps settings too.
	for _, a := range []e2etest.Actor{w.Alex, w.Robin} {
		h = w.Head(t)
		r = w.Must(t, a, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, &st)
		if st.Version != 1 {
			t.Fatalf("%s's first theme is at version %d", a.Name, st.Version)
		}
		w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "setting.updated", Kind: kernel.ResourcePrincipal, ID: a.ID, Actor: a.ID, Audience: a.ID})
	}

	// putSidebar: the sections as given, duplicates within a section dropped; channel ids are
	// stored as given, also one Sam cannot read (delivery filters them).
	var dm apigen.Channel
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &dm)
	h = w.Head(t)
	var sb apigen.SidebarState
	body := fmt.Sprintf(`{"sections":[{"key":"favourites","title":"Favourites","collapsed":false,"channel_ids":[%q,%q,%q]},{"key":"later","title":"","collapsed":true,"channel_ids":[]}]}`,
		channel, dm.Id, channel)
	r = w.Must(t, sam, http.MethodPut, "/api/v1/me/sidebar", body, http.StatusOK, &sb)
	if sb.Version != 1 || len(sb.Sections) != 2 || fmt.Sprint(sb.Sections[0].ChannelIds) != fmt.Sprint([]uuid.UUID{channel, dm.Id}) || !sb.Sections[1].Collapsed {
		t.Fatalf("putSidebar = %+v", sb)
	}
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "sidebar.updated", Kind: kernel.ResourcePrincipal, ID: sam.ID, Actor: sam.ID, Audience: sam.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{
		"sections": []any{
			map[string]any{"channel_ids": e2etest.IDStrings(channel, dm.Id), "collapsed": false, "key": "favourites", "title": "Favourites"},
			map[string]any{"channel_ids": []any{}, "collapsed": true, "key": "later", "title": ""},
		},
		"version": 1,
	})
	h = w.Head(t)
	r = w.Must(t, sam, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[]}`, http.StatusOK, &sb)
	if sb.Version != 2 || len(sb.Sections) != 0 {
		t.Fatalf("the emptied sidebar = %+v", sb)
	}
	ev = w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "sidebar.updated", Kind: kernel.ResourcePrincipal, ID: sam.ID, Actor: sam.ID, Audience: sam.ID})
	e2etest.RequirePayload(t, ev[0], map[string]any{"sections": []any{}, "version": 2})
}

// TestPersonalDataRefusalsAppendNothing sends personal-data writes that fail validation
// (400 naming the field), authorization (403 for a viewer, who keeps no read state or draft;
// 404 for what the actor cannot see) or the state (409 for a draft in an archived channel),
// and checks that none appends anything. A draft saved before its channel was archived can
// still be deleted.
func TestPersonalDataRefusalsAppendNothing(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false,
		wiretest.WithSetting(syncapp.KeyMaxSettingBytes, "64"),
		wiretest.WithSetting(syncapp.KeyMaxDraftBytes, "32"))
	alex, sam, robin := w.Alex, w.Sam, w.Robin
	campaignsDraft := "/api/v1/channels/" + w.Campaigns.String() + "/draft"
	ticketsDraft := "/api/v1/channels/" + w.Tickets.String() + "/draft"
	campaignRead := "/api/v1/threads/" + w.CampaignThread.String() + "/read-state"
	ticketRead := "/api/v1/threads/" + w.TicketThread.String() + "/read-state"
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

	w.Refuse(t,
		// Validation.
		e2etest.Refusal{Name: "negative last_read_seq", As: sam, Method: http.MethodPut, Path: campaignRead, Body: `{"last_read_seq":-1}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"last_read_seq"}},
		e2etest.Refusal{Name: "empty draft", As: sam, Method: http.MethodPut, Path: campaignsDraft, Body: `{"content_md":""}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "draft over sync.max_draft_bytes", As: sam, Method: http.MethodPut, Path: campaignsDraft, Body: fmt.Sprintf(`{"content_md":%q}`, strings.Repeat("d", 33)), Status: 400, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "setting key with a capital", As: sam, Method: http.MethodPut, Path: setting("Theme"), Body: `{"value":"dark"}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"key"}},
		e2etest.Refusal{Name: "setting key starting with a digit", As: sam, Method: http.MethodPut, Path: setting("1theme"), Body: `{"value":"dark"}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"key"}},
		e2etest.Refusal{Name: "setting key of 65 characters", As: sam, Method: http.MethodPut, Path: setting(strings.Repeat("k", 65)), Body: `{"value":"dark"}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"key"}},
		e2etest.Refusal{Name: "null setting value", As: sam, Method: http.MethodPut, Path: setting("theme"), Body: `{"value":null}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"value"}},
		e2etest.Refusal{Name: "null inside a setting value", As: sam, Method: http.MethodPut, Path: setting("theme"), Body: `{"value":{"mode":"dark","accent":[1,null]}}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"value"}},
		e2etest.Refusal{Name: "setting without a value", As: sam, Method: http.MethodPut, Path: setting("theme"), Body: `{}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"value"}},
		e2etest.Refusal{Name: "setting value over sync.max_setting_bytes", As: sam, Method: http.MethodPut, Path: setting("theme"), Body: fmt.Sprintf(`{"value":%q}`, strings.Repeat("v", 64)), Status: 400, Code: e2etest.Invalid, Fields: []string{"value"}},
		e2etest.Refusal{Name: "bad key and null value at once", As: sam, Method: http.MethodPut, Path: setting("Theme"), Body: `{"value":null}`, Status: 400, Code: e2etest.Invalid, Fields: []string{"key", "value"}},
		e2etest.Refusal{Name: "sidebar with a duplicate section key", As: sam, Method: http.MethodPut, Path: "/api/v1/me/sidebar", Body: sidebar(section("a", "A"), section("a", "B")), Status: 400, Code: e2etest.Invalid, Fields: []string{"sections"}},
		e2etest.Refusal{Name: "sidebar of 51 sections", As: sam, Method: http.MethodPut, Path: "/api/v1/me/sidebar", Body: sidebar(many...), Status: 400, Code: e2etest.Invalid, Fields: []string{"sections"}},
		e2etest.Refusal{Name: "sidebar section title of 81 characters", As: sam, Method: http.MethodPut, Path: "/api/v1/me/sidebar", Body: sidebar(section("a", strings.Repeat("t", 81))), Status: 400, Code: e2etest.Invalid, Fields: []string{"sections"}},
		e2etest.Refusal{Name: "sidebar section without a key", As: sam, Method: http.MethodPut, Path: "/api/v1/me/sidebar", Body: sidebar(section("", "A")), Status: 400, Code: e2etest.Invalid, Fields: []string{"sections"}},

		// 403: Sam is a viewer of Support: he reads it but keeps no personal data there.
		e2etest.Refusal{Name: "a viewer's read state", As: sam, Method: http.MethodPut, Path: ticketRead, Body: `{"last_read_seq":1}`, Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer's draft", As: sam, Method: http.MethodPut, Path: ticketsDraft, Body: `{"content_md":"Hello"}`, Status: 403, Code: e2etest.Forbidden},
		e2etest.Refusal{Name: "a viewer's draft deleted", As: sam, Method: http.MethodDelete, Path: ticketsDraft, Status: 403, Code: e2etest.Forbidden},

		// 404: Robin cannot see Support; nobody sees a random thread or channel.
		e2etest.Refusal{Name: "a stranger's read state", As: robin, Method: http.MethodPut, Path: ticketRead, Body: `{"last_read_seq":1}`, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger's draft", As: robin, Method: http.MethodPut, Path: ticketsDraft, Body: `{"content_md":"Hello"}`, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a stranger's draft deleted", As: robin, Method: http.MethodDelete, Path: ticketsDraft, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a read state of no thread", As: alex, Method: http.MethodPut, Path: "/api/v1/threads/" + random + "/read-state", Body: `{"last_read_seq":1}`, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a draft in no channel", As: alex, Method: http.MethodPut, Path: "/api/v1/channels/" + random + "/draft", Body: `{"content_md":"Hello"}`, Status: 404, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "a draft of a thread of another channel", As: sam, Method: http.MethodPut, Path: campaignsDraft,
			Body: fmt.Sprintf(`{"content_md":"Hello","thread_id":%q}`, w.TicketThread), Status: 404, Code: e2etest.NotFound},
	)

	// A draft in campaigns, then campaigns archived: no new draft (409), but the old one can
	// be deleted.
	w.Must(t, sam, http.MethodPut, campaignsDraft, `{"content_md":"Before the archive"}`, http.StatusOK, nil)
	w.Must(t, alex, http.MethodPost, "/api/v1/channels/"+w.Campaigns.String()+"/archive", "", http.StatusOK, nil)
	w.Refuse(t,
		e2etest.Refusal{Name: "a draft in an archived channel", As: sam, Method: http.MethodPut, Path: campaignsDraft, Body: `{"content_md":"After the archive"}`, Status: 409, Code: e2etest.Conflict},
		e2etest.Refusal{Name: "a thread's draft in an archived channel", As: sam, Method: http.MethodPut, Path: campaignsDraft,
			Body: fmt.Sprintf(`{"content_md":"After the archive","thread_id":%q}`, w.CampaignThread), Status: 409, Code: e2etest.Conflict},
	)
	h := w.Head(t)
	r := w.Must(t, sam, http.MethodDelete, campaignsDraft, "", http.StatusNoContent, nil)
	w.ExpectEvents(t, h, r, e2etest.WantEvent{Typ: "draft.deleted", Kind: kernel.ResourceChannel, ID: w.Campaigns, Space: w.Marketing, Channel: w.Campaigns, Actor: sam.ID, Audience: sam.ID})

	// The limits are inclusive.
	w.Must(t, sam, http.MethodPut, setting("a"+strings.Repeat("k", 63)), fmt.Sprintf(`{"value":%q}`, strings.Repeat("v", 62)), http.StatusOK, nil)
	w.Must(t, alex, http.MethodPut, ticketsDraft, fmt.Sprintf(`{"content_md":%q}`, strings.Repeat("d", 32)), http.StatusOK, nil)
}

// TestSidebarAndDirectMessagesDeliveredToReaders: a sidebar is stored with the channel ids as
// given, also ids its owner cannot read, and delivered (getSnapshot) without them; a direct
// message is in the snapshot of its participants only, not in the owner's, whose role could
// read it.
func TestSidebarAndDirectMessagesDeliveredToReaders(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	var alexRobin, samRobin apigen.Channel
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &alexRobin)
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &samRobin)
	random := uuid.New()

	given := []uuid.UUID{w.Campaigns, alexRobin.Id, random, w.Tickets, samRobin.Id}
	var sb apigen.SidebarState
	list, err := json.Marshal(given)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"sections":[{"key":"all","title":"All","collapsed":false,"channel_ids":%s}]}`, list)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/me/sidebar", body, http.StatusOK, &sb)
	if fmt.Sprint(sb.Sections[0].ChannelIds) != fmt.Sprint(given) {
		t.Fatalf("the sidebar was stored as %v, want %v as given", sb.Sections[0].ChannelIds, given)
	}

	snapshot := func(a e2etest.Actor) apigen.Snapshot {
		var s apigen.Snapshot
		w.Must(t, a, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &s)
		return s
	}
	channelIDs := func(s apigen.Snapshot) map[uuid.UUID]bool {
		out := map[uuid.UUID]bool{}
		for _, c := range s.Channels {
			out[c.Id] = true
		}
		return out
	}
	sams := snapshot(w.Sam)
	if got, want := fmt.Sprint(sams.Sidebar.Sections[0].ChannelIds), fmt.Sprint([]uuid.UUID{w.Campaigns, w.Tickets, samRobin.Id}); got != want {
		t.Fatalf("Sam's delivered sidebar holds %s, want %s", got, want)
	}
	if ch := channelIDs(sams); !ch[samRobin.Id] || ch[alexRobin.Id] {
		t.Fatalf("Sam's snapshot channels %v: want his direct message, not Alex's", sams.Channels)
	}
	if ch := channelIDs(snapshot(w.Alex)); !ch[alexRobin.Id] || ch[samRobin.Id] {
		t.Fatal("the owner's snapshot lists a direct message he does not take part in, or misses his own")
	}
	if ch := channelIDs(snapshot(w.Robin)); !ch[alexRobin.Id] || !ch[samRobin.Id] || ch[w.Tickets] {
		t.Fatal("Robin's snapshot does not list exactly his direct messages")
	}
}
