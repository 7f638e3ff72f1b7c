package chat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/wiretest"
)

// conditional checks the validators of a conditional read's 200 and returns its ETag.
func conditional(t *testing.T, r *wiretest.Response) string {
	t.Helper()
	etag := r.Header.Get("ETag")
	if len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		t.Fatalf("ETag %q is no strong entity tag", etag)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "private, no-cache" {
		t.Fatalf("Cache-Control %q, want private, no-cache", cc)
	}
	return etag
}

// TestReadOneObject: each single-object read answers what the actor sees, with the level
// and capabilities the listings show, a thread's header with its counts and names, and the
// message as listMessages lists it.
func TestReadOneObject(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	paths := w.ReadPaths()

	var sp apigen.SpaceView
	conditional(t, w.Must(t, w.Sam, http.MethodGet, paths["getSpace"], "", http.StatusOK, &sp))
	if sp.Id != w.Support || sp.Name != "Support" || sp.Level == nil || *sp.Level != "viewer" || len(sp.Capabilities) != 0 || sp.ArchivedAt != nil {
		t.Errorf("Sam's Support: %+v", sp)
	}
	var ch apigen.ChannelView
	conditional(t, w.Must(t, w.Sam, http.MethodGet, paths["getChannel"], "", http.StatusOK, &ch))
	if ch.Id != w.Tickets || ch.SpaceId == nil || *ch.SpaceId != w.Support || ch.Name == nil || *ch.Name != "tickets" || ch.Level != "viewer" || len(ch.Capabilities) != 0 {
		t.Errorf("Sam's tickets: %+v", ch)
	}
	// In Marketing Sam is a member: the capabilities listSpaceChannels shows.
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/channels/"+w.Campaigns.String(), "", http.StatusOK, &ch)
	var listed apigen.ChannelViewList
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/spaces/"+w.Marketing.String()+"/channels", "", http.StatusOK, &listed)
	if len(listed.Items) != 1 || ch.Level != listed.Items[0].Level || !slices.Equal(ch.Capabilities, listed.Items[0].Capabilities) {
		t.Errorf("getChannel %+v, listSpaceChannels %+v", ch, listed.Items)
	}

	reply := w.Post(t, w.Alex, w.TicketThread, "On my way, @sam")
	var th apigen.ThreadView
	conditional(t, w.Must(t, w.Sam, http.MethodGet, paths["getThread"], "", http.StatusOK, &th))
	if th.Id != w.TicketThread || th.ChannelId != w.Tickets || th.ChannelKind != apigen.ChannelKindStandard || th.ChannelName == nil || *th.ChannelName != "tickets" ||
		th.SpaceId == nil || *th.SpaceId != w.Support || th.SpaceName == nil || *th.SpaceName != "Support" || th.CreatedBy != w.Alex.ID ||
		th.LastMessageSeq != 2 || th.ReplyCount != 1 || !th.LastMessageAt.Equal(reply.CreatedAt) ||
		th.FirstMessage.Id != w.TicketFirstMsg || th.FirstMessage.ContentMd != w.TicketContent {
		t.Errorf("Sam's ticket thread: %+v", th)
	}

	var m apigen.Message
	conditional(t, w.Must(t, w.Sam, http.MethodGet, "/api/v1/messages/"+reply.Id.String(), "", http.StatusOK, &m))
	listedMsgs := w.Messages(t, w.Sam, w.TicketThread)
	if len(listedMsgs) != 2 || fmt.Sprint(m) != fmt.Sprint(listedMsgs[1]) || m.ContentMd != "On my way, @sam" || !slices.Equal(m.MentionIds, []uuid.UUID{w.Sam.ID}) {
		t.Errorf("getMessage %+v, listMessages %+v", m, listedMsgs)
	}
	// A deleted message reads as listMessages lists it: redacted, without content.
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+reply.Id.String(), "", http.StatusNoContent, nil)
	m = apigen.Message{}
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/messages/"+reply.Id.String(), "", http.StatusOK, &m)
	if !m.Redacted || m.ContentMd != "" || len(m.MentionIds) != 0 || m.RedactedAt == nil {
		t.Errorf("deleted message: %+v", m)
	}

	// An archived space and channel are still read, with their archive time.
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/channels/"+w.Tickets.String()+"/archive", "", http.StatusOK, nil)
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/spaces/"+w.Support.String()+"/archive", "", http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodGet, paths["getSpace"], "", http.StatusOK, &sp)
	w.Must(t, w.Sam, http.MethodGet, paths["getChannel"], "", http.StatusOK, &ch)
	if sp.ArchivedAt == nil || ch.ArchivedAt == nil {
		t.Errorf("archived: space %+v, channel %+v", sp, ch)
	}

	// A thread of a direct message has no space.
	var dm apigen.Channel
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &dm)
	dmThread := w.Thread(t, w.Robin, dm.Id, "Lunch?")
	th = apigen.ThreadView{} // decoding into a fresh value: absent members stay absent
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/threads/"+dmThread.Id.String(), "", http.StatusOK, &th)
	if th.ChannelKind != apigen.ChannelKindDm || th.ChannelName != nil || th.SpaceId != nil || th.SpaceName != nil || th.ReplyCount != 0 || th.LastMessageSeq != 1 {
		t.Errorf("thread of a direct message: %+v", th)
	}
}

// TestReadsInvisibleIsMissing: every read of something the actor may not read answers 404
// with exactly the body of an id that does not exist (request id aside): Robin, who holds no
// grant, on the Support side; the owner on a direct message of Sam and Robin.
func TestReadsInvisibleIsMissing(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	var dm apigen.Channel
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &dm)
	dmThread := w.Thread(t, w.Sam, dm.Id, "Lunch?")
	missing := uuid.New().String()
	cases := []struct {
		name             string
		as               e2etest.Actor
		path, missingOne string
	}{
		{"getSpace", w.Robin, "/api/v1/spaces/" + w.Support.String(), "/api/v1/spaces/" + missing},
		{"getChannel", w.Robin, "/api/v1/channels/" + w.Tickets.String(), "/api/v1/channels/" + missing},
		{"getThread", w.Robin, "/api/v1/threads/" + w.TicketThread.String(), "/api/v1/threads/" + missing},
		{"getMessage", w.Robin, "/api/v1/messages/" + w.TicketFirstMsg.String(), "/api/v1/messages/" + missing},
		{"listChannelMembers", w.Robin, "/api/v1/channels/" + w.Tickets.String() + "/members?limit=1", "/api/v1/channels/" + missing + "/members?limit=1"},
		{"getDraft", w.Robin, "/api/v1/channels/" + w.Tickets.String() + "/draft", "/api/v1/channels/" + missing + "/draft"},
		{"getDraft of a thread", w.Robin, "/api/v1/channels/" + w.Tickets.String() + "/draft?thread_id=" + w.TicketThread.String(), "/api/v1/channels/" + missing + "/draft?thread_id=" + w.TicketThread.String()},
		{"getChannel of a DM", w.Alex, "/api/v1/channels/" + dm.Id.String(), "/api/v1/channels/" + missing},
		{"listChannelMembers of a DM", w.Alex, "/api/v1/channels/" + dm.Id.String() + "/members", "/api/v1/channels/" + missing + "/members"},
		{"getThread of a DM", w.Alex, "/api/v1/threads/" + dmThread.Id.String(), "/api/v1/threads/" + missing},
		{"getMessage of a DM", w.Alex, "/api/v1/messages/" + dmThread.FirstMessage.Id.String(), "/api/v1/messages/" + missing},
		{"getDraft of a DM", w.Alex, "/api/v1/channels/" + dm.Id.String() + "/draft", "/api/v1/channels/" + missing + "/draft"},
	}
	for _, c := range cases {
		hidden := w.Do(t, c.as, http.MethodGet, c.path, "")
		hidden.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		gone := w.Do(t, c.as, http.MethodGet, c.missingOne, "")
		gone.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
		if a, b := e2etest.ProblemBody(t, hidden), e2etest.ProblemBody(t, gone); a != b {
			t.Errorf("%s: invisible %s, missing %s", c.name, a, b)
		}
		if hidden.Header.Get("ETag") != "" {
			t.Errorf("%s: a 404 with an ETag", c.name)
		}
	}
}

// memberLevels renders members as handle:level in the order given.
func memberLevels(list []apigen.ChannelMember) []string {
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = m.Principal.Handle + ":" + string(m.Level)
	}
	return out
}

// TestListChannelMembersPages: a channel's members are who can read it by their grants
// (the owner through the instance, Sam through the space, Robin through the channel), each
// with its highest role, in principal id order; pages of one reach the same list to the end,
// and a larger limit is capped by chat.members_page_size. A direct message's members are its
// participants.
func TestListChannelMembersPages(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false, wiretest.WithSetting(chatapp.KeyMembersPageSize, "2"))
	w.Grant(t, w.Robin, "channel", w.Tickets, "member")
	w.Grant(t, w.Sam, "channel", w.Tickets, "admin") // beside Sam's viewer grant on Support
	idOrder := e2etest.SortedIDs(w.Alex.ID, w.Sam.ID, w.Robin.ID)
	handles := map[uuid.UUID]string{w.Alex.ID: "alex:owner", w.Sam.ID: "sam:admin", w.Robin.ID: "robin:member"}
	var want []string
	for _, id := range idOrder {
		want = append(want, handles[id])
	}
	for _, limit := range []int{1, 2, 0, 50} {
		got, pages := w.Members(t, w.Robin, w.Tickets, limit)
		if !slices.Equal(memberLevels(got), want) {
			t.Errorf("limit %d: %v, want %v", limit, memberLevels(got), want)
		}
		// chat.members_page_size is 2: three members take two pages at every limit but 1,
		// which takes three and an empty fourth after the full third.
		wantPages := 2
		if limit == 1 {
			wantPages = 4
		}
		if pages != wantPages {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
	for _, m := range func() []apigen.ChannelMember { l, _ := w.Members(t, w.Alex, w.Tickets, 0); return l }() {
		if m.Principal.Id == w.Sam.ID && (m.Principal.DisplayName != "Sam" || m.Principal.Kind != apigen.PrincipalKindPerson) {
			t.Errorf("Sam named %+v", m.Principal)
		}
	}
	// Robin reads nothing of Marketing: campaigns has Alex and Sam.
	got, _ := w.Members(t, w.Sam, w.Campaigns, 0)
	if l := memberLevels(got); len(l) != 2 || !slices.Contains(l, "alex:owner") || !slices.Contains(l, "sam:member") {
		t.Errorf("campaigns: %v", l)
	}
	var dm apigen.Channel
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &dm)
	got, _ = w.Members(t, w.Robin, dm.Id, 1)
	if l := memberLevels(got); len(l) != 2 || !slices.Contains(l, "sam:member") || !slices.Contains(l, "robin:member") {
		t.Errorf("direct message: %v, want Sam and Robin (the owner takes no part)", l)
	}
}

// TestReadsRefuseBadParameters: a malformed id, cursor, limit or thread_id answers 400
// naming it and reads nothing.
func TestReadsRefuseBadParameters(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	tickets := "/api/v1/channels/" + w.Tickets.String()
	w.Refuse(t,
		e2etest.Refusal{Name: "space id", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/spaces/support", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"space_id"}},
		e2etest.Refusal{Name: "channel id", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/channels/42", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"channel_id"}},
		e2etest.Refusal{Name: "thread id", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/threads/x", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"thread_id"}},
		e2etest.Refusal{Name: "message id", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/messages/x", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"message_id"}},
		e2etest.Refusal{Name: "members cursor", As: w.Sam, Method: http.MethodGet, Path: tickets + "/members?cursor=alex", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"cursor"}},
		e2etest.Refusal{Name: "members limit", As: w.Sam, Method: http.MethodGet, Path: tickets + "/members?limit=ten", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"limit"}},
		e2etest.Refusal{Name: "draft thread id", As: w.Sam, Method: http.MethodGet, Path: tickets + "/draft?thread_id=first", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"thread_id"}},
	)
}

// TestConditionalReads: every single-object read carries an ETag; the same ETag in
// If-None-Match answers 304 without a body (on HEAD too), and a change of the object (an
// edit, a reply, a grant that changes the actor's level, an archive, a draft saved again)
// gives a new one.
func TestConditionalReads(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	paths := w.ReadPaths()
	tag := func(name string) string {
		t.Helper()
		return conditional(t, w.Must(t, w.Sam, http.MethodGet, paths[name], "", http.StatusOK, nil))
	}
	unchanged := func(name, etag string) {
		t.Helper()
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			r := w.Do(t, w.Sam, method, paths[name], "", "If-None-Match", etag)
			if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != etag || r.Header.Get("Cache-Control") != "private, no-cache" {
				t.Fatalf("%s %s with its ETag: %d %v %s, want 304 with the ETag and no body", method, name, r.Status, r.Header, r.Body)
			}
		}
	}
	changed := func(name, old string) string {
		t.Helper()
		r := w.Do(t, w.Sam, http.MethodGet, paths[name], "", "If-None-Match", old)
		if r.Status != http.StatusOK {
			t.Fatalf("%s after a change: %d, want 200", name, r.Status)
		}
		etag := conditional(t, r)
		if etag == old {
			t.Fatalf("%s: the ETag %s did not change with the object", name, etag)
		}
		return etag
	}

	msg := tag("getMessage")
	unchanged("getMessage", msg)
	w.Must(t, w.Alex, http.MethodPatch, paths["getMessage"], `{"content_md":"The printer on floor 2 is jammed again"}`, http.StatusOK, nil)
	msg = changed("getMessage", msg)
	unchanged("getMessage", msg)

	th := tag("getThread")
	unchanged("getThread", th)
	w.Post(t, w.Alex, w.TicketThread, "Fixed")
	changed("getThread", th)

	ch := tag("getChannel")
	sp := tag("getSpace")
	unchanged("getChannel", ch)
	unchanged("getSpace", sp)
	w.Grant(t, w.Sam, "channel", w.Tickets, "member") // Sam's level in tickets rises
	ch = changed("getChannel", ch)
	unchanged("getSpace", sp)
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/spaces/"+w.Support.String()+"/archive", "", http.StatusOK, nil)
	changed("getSpace", sp)
	unchanged("getChannel", ch)

	// One's draft, which Sam may keep in tickets now.
	paths["getDraft"] = "/api/v1/channels/" + w.Tickets.String() + "/draft?thread_id=" + w.TicketThread.String()
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", fmt.Sprintf(`{"content_md":"Half a reply","thread_id":%q}`, w.TicketThread), http.StatusOK, nil)
	dr := tag("getDraft")
	unchanged("getDraft", dr)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", fmt.Sprintf(`{"content_md":"Half a reply","thread_id":%q}`, w.TicketThread), http.StatusOK, nil)
	changed("getDraft", dr) // the same text, a new version

	// An If-None-Match that names another tag, or several, is compared tag by tag.
	r := w.Do(t, w.Sam, http.MethodGet, paths["getMessage"], "", "If-None-Match", `"stale", `+msg)
	if r.Status != http.StatusNotModified {
		t.Errorf("a list of tags with the current one: %d, want 304", r.Status)
	}
	r = w.Do(t, w.Sam, http.MethodGet, paths["getMessage"], "", "If-None-Match", `"stale"`)
	if r.Status != http.StatusOK {
		t.Errorf("a stale tag: %d, want 200", r.Status)
	}
}

// TestReadsHeadLikeGet: HEAD on each new read answers the GET's status and headers without a
// body.
func TestReadsHeadLikeGet(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", `{"content_md":"Spring ideas"}`, http.StatusOK, nil)
	paths := w.ReadPaths()
	paths["getDraft"] = "/api/v1/channels/" + w.Campaigns.String() + "/draft"
	paths["getDraft (none)"] = "/api/v1/channels/" + w.Campaigns.String() + "/draft?thread_id=" + w.CampaignThread.String()
	for name, path := range paths {
		get := w.Do(t, w.Sam, http.MethodGet, path, "", "Accept-Encoding", "identity")
		head := w.Do(t, w.Sam, http.MethodHead, path, "", "Accept-Encoding", "identity")
		if get.Status != head.Status || len(head.Body) != 0 {
			t.Errorf("%s: GET %d, HEAD %d with %d bytes", name, get.Status, head.Status, len(head.Body))
		}
		for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
			if get.Header.Get(h) != head.Header.Get(h) {
				t.Errorf("HEAD %s: %s %q, GET has %q", name, h, head.Header.Get(h), get.Header.Get(h))
			}
		}
	}
}

// TestGetDraft: the actor's own draft with its text, of the channel or of one of its
// threads; none is 404; a viewer reads with draft.read (whoever reads the channel), so it
// gets 404 for the draft it never kept, not 403; a thread of another channel 404; someone
// else never reads it.
func TestGetDraft(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	campaigns := "/api/v1/channels/" + w.Campaigns.String() + "/draft"
	thread := "?thread_id=" + w.CampaignThread.String()
	w.Must(t, w.Sam, http.MethodPut, campaigns, `{"content_md":"A new idea"}`, http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodPut, campaigns, fmt.Sprintf(`{"content_md":"Half a reply","thread_id":%q}`, w.CampaignThread), http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodPut, campaigns, fmt.Sprintf(`{"content_md":"Half a reply, longer","thread_id":%q}`, w.CampaignThread), http.StatusOK, nil)

	var d apigen.Draft
	w.Must(t, w.Sam, http.MethodGet, campaigns, "", http.StatusOK, &d)
	if d.ChannelId != w.Campaigns || d.ThreadId != nil || d.ContentMd != "A new idea" || d.Version != 1 {
		t.Errorf("the channel's draft: %+v", d)
	}
	w.Must(t, w.Sam, http.MethodGet, campaigns+thread, "", http.StatusOK, &d)
	if d.ThreadId == nil || *d.ThreadId != w.CampaignThread || d.ContentMd != "Half a reply, longer" || d.Version != 2 {
		t.Errorf("the thread's draft: %+v", d)
	}
	// The snapshot names the drafts without their text; getDraft has it.
	var snap map[string]json.RawMessage
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &snap)
	if !strings.Contains(string(snap["drafts"]), w.CampaignThread.String()) || strings.Contains(string(snap["drafts"]), "Half a reply") {
		t.Errorf("snapshot drafts: %s", snap["drafts"])
	}

	w.Must(t, w.Sam, http.MethodDelete, campaigns+thread, "", http.StatusNoContent, nil)
	w.Refuse(t,
		e2etest.Refusal{Name: "deleted draft", As: w.Sam, Method: http.MethodGet, Path: campaigns + thread, Status: http.StatusNotFound, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "another's draft", As: w.Alex, Method: http.MethodGet, Path: campaigns, Status: http.StatusNotFound, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "viewer", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/channels/" + w.Tickets.String() + "/draft", Status: http.StatusNotFound, Code: e2etest.NotFound},
		e2etest.Refusal{Name: "thread of another channel", As: w.Sam, Method: http.MethodGet, Path: campaigns + "?thread_id=" + w.TicketThread.String(), Status: http.StatusNotFound, Code: e2etest.NotFound},
	)
}

// TestListChannelMembersLeavesOutTheDeactivated: a deactivated principal reads no channel, so
// listChannelMembers leaves it out though its grant remains; pages of one still reach the end
// (its grant moves the cursor), and reactivation lists it again.
func TestListChannelMembersLeavesOutTheDeactivated(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	w.Grant(t, w.Robin, "channel", w.Tickets, "member")
	all := func() []string {
		var out []string
		for _, id := range e2etest.SortedIDs(w.Alex.ID, w.Sam.ID, w.Robin.ID) {
			out = append(out, map[uuid.UUID]string{w.Alex.ID: "alex:owner", w.Sam.ID: "sam:viewer", w.Robin.ID: "robin:member"}[id])
		}
		return out
	}()
	if got, _ := w.Members(t, w.Sam, w.Tickets, 0); !slices.Equal(memberLevels(got), all) {
		t.Fatalf("before: %v, want %v", memberLevels(got), all)
	}
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Robin.ID.String()+"/deactivate", "", http.StatusOK, nil)
	want := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "robin:member" })
	for _, limit := range []int{0, 1} {
		if got, _ := w.Members(t, w.Sam, w.Tickets, limit); !slices.Equal(memberLevels(got), want) {
			t.Fatalf("limit %d, Robin deactivated: %v, want %v", limit, memberLevels(got), want)
		}
	}
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Robin.ID.String()+"/reactivate", "", http.StatusOK, nil)
	if got, _ := w.Members(t, w.Sam, w.Tickets, 0); !slices.Equal(memberLevels(got), all) {
		t.Fatalf("reactivated: %v, want %v", memberLevels(got), all)
	}
}
