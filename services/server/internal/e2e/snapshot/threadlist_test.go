package wire_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// The integration tests of listChannelThreads (issue 13, deliverable 3) run over real HTTP
// through the validating client, on the chatWorld: Sam is a member of Marketing (campaigns)
// and a viewer of Support (tickets), Robin holds no grant.

// threadsPath is the thread list of a channel with the query q (may be empty).
func threadsPath(channel uuid.UUID, q url.Values) string {
	p := "/api/v1/channels/" + channel.String() + "/threads"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// listThreads reads one page of the channel's threads as a.
func (w *chatWorld) listThreads(t *testing.T, a worldActor, channel uuid.UUID, q url.Values) (apigen.ThreadSummaryList, string) {
	t.Helper()
	var page apigen.ThreadSummaryList
	r := w.must(t, a, http.MethodGet, threadsPath(channel, q), "", http.StatusOK, &page)
	return page, r.Header.Get("ETag")
}

// threadIDs are the ids of a page's items, in order.
func threadIDs(items []apigen.ThreadSummary) []uuid.UUID {
	out := make([]uuid.UUID, len(items))
	for i, it := range items {
		out[i] = it.Id
	}
	return out
}

// TestListChannelThreadsOrderAndFields: the threads of a channel come most recent activity
// first, each with its title, first message excerpt, reply count and newest message; a post
// moves its thread to the top.
func TestListChannelThreadsOrderAndFields(t *testing.T) {
	w := newChatWorld(t, false)
	// campaigns has campaignThread (Alex's, at build time); three more, a minute apart.
	var started []apigen.Thread
	for i, title := range []string{"Launch", "Budget", "Venue"} {
		w.env.Clock.Advance(time.Minute)
		body := fmt.Sprintf(`{"title":%q,"content_md":"%s plan number %d"}`, title, title, i)
		var th apigen.Thread
		w.must(t, w.alex, http.MethodPost, "/api/v1/channels/"+w.campaigns.String()+"/threads", body, http.StatusCreated, &th)
		started = append(started, th)
	}

	page, _ := w.listThreads(t, w.sam, w.campaigns, nil)
	want := []uuid.UUID{started[2].Id, started[1].Id, started[0].Id, w.campaignThread}
	if got := threadIDs(page.Items); !slices.Equal(got, want) {
		t.Fatalf("order %v, want newest first %v", got, want)
	}
	if page.NextCursor != nil {
		t.Fatalf("next_cursor %q on a page that is not full", *page.NextCursor)
	}
	venue := page.Items[0]
	if venue.Title != "Venue" || venue.FirstMessageExcerpt != "Venue plan number 2" || venue.ReplyCount != 0 ||
		venue.LastMessageSeq != 1 || venue.FirstMessageRedacted || venue.CreatedBy != w.alex.id ||
		venue.SpaceId == nil || *venue.SpaceId != w.marketing || venue.ChannelId != w.campaigns {
		t.Fatalf("Venue item %+v", venue)
	}
	if !venue.LastMessageAt.Equal(started[2].FirstMessage.CreatedAt) {
		t.Fatalf("Venue last_message_at %v, want its first message's %v", venue.LastMessageAt, started[2].FirstMessage.CreatedAt)
	}

	// Two replies to the oldest thread: it moves to the top, with its newest message.
	w.env.Clock.Advance(time.Minute)
	w.post(t, w.sam, w.campaignThread, "A reply")
	w.env.Clock.Advance(time.Minute)
	last := w.post(t, w.alex, w.campaignThread, "Another reply")
	page, _ = w.listThreads(t, w.sam, w.campaigns, nil)
	want = []uuid.UUID{w.campaignThread, started[2].Id, started[1].Id, started[0].Id}
	if got := threadIDs(page.Items); !slices.Equal(got, want) {
		t.Fatalf("order after the replies %v, want %v", got, want)
	}
	top := page.Items[0]
	if top.ReplyCount != 2 || top.LastMessageSeq != 3 || !top.LastMessageAt.Equal(last.CreatedAt) ||
		top.FirstMessageExcerpt != w.campaignContent {
		t.Fatalf("the replied thread %+v, want 2 replies, seq 3 at %v", top, last.CreatedAt)
	}
	// The raw JSON carries the same timestamp string as the post's answer.
	r := w.must(t, w.sam, http.MethodGet, threadsPath(w.campaigns, nil), "", http.StatusOK, nil)
	if stamp := last.CreatedAt.UTC().Format(time.RFC3339Nano); !strings.Contains(string(r.Body), `"last_message_at":"`+stamp+`"`) {
		t.Fatalf("the list does not carry the post's created_at %s: %s", stamp, r.Body)
	}

	// Deleting the first message empties the excerpt and marks it; an edit is no activity.
	w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+started[0].FirstMessage.Id.String(), "", http.StatusNoContent, nil)
	w.env.Clock.Advance(time.Minute)
	w.must(t, w.alex, http.MethodPatch, "/api/v1/messages/"+started[1].FirstMessage.Id.String(), `{"content_md":"Budget, revised"}`, http.StatusOK, nil)
	page, _ = w.listThreads(t, w.sam, w.campaigns, nil)
	if got := threadIDs(page.Items); !slices.Equal(got, want) {
		t.Fatalf("order after an edit and a deletion %v, want %v", got, want)
	}
	if it := page.Items[3]; it.FirstMessageExcerpt != "" || !it.FirstMessageRedacted {
		t.Fatalf("the thread whose first message is deleted: %+v", it)
	}
	if it := page.Items[2]; it.FirstMessageExcerpt != "Budget, revised" {
		t.Fatalf("the edited first message's excerpt %q", it.FirstMessageExcerpt)
	}
}

// TestListChannelThreadsExcerptIsCut: the excerpt is the first chat.thread_excerpt_chars
// characters of the first message, cut on a character.
func TestListChannelThreadsExcerptIsCut(t *testing.T) {
	w := newChatWorld(t, false)
	long := strings.Repeat("é", 250) // two bytes each
	var th apigen.Thread
	w.must(t, w.alex, http.MethodPost, "/api/v1/channels/"+w.campaigns.String()+"/threads", `{"content_md":"`+long+`"}`, http.StatusCreated, &th)
	page, _ := w.listThreads(t, w.sam, w.campaigns, nil)
	if got := page.Items[0]; got.Id != th.Id || got.FirstMessageExcerpt != strings.Repeat("é", 200) || got.Title != "" {
		t.Fatalf("excerpt of %d characters %q, want the first 200", len([]rune(got.FirstMessageExcerpt)), got.FirstMessageExcerpt)
	}
}

// TestListChannelThreadsPaging: a small page size pages to the end, each thread once, in the
// order of the whole list, and the last page has no next_cursor; limits above the page size
// are capped, never an error.
func TestListChannelThreadsPaging(t *testing.T) {
	w := newChatWorld(t, false)
	for i := range 6 {
		if i%2 == 0 {
			w.env.Clock.Advance(time.Second) // pairs share a time: the id breaks the tie
		}
		w.thread(t, w.alex, w.campaigns, fmt.Sprintf("Thread %d", i))
	}
	whole, _ := w.listThreads(t, w.sam, w.campaigns, nil)
	if len(whole.Items) != 7 {
		t.Fatalf("%d threads, want 7", len(whole.Items))
	}
	for _, limit := range []int{1, 2, 3, 7} {
		var got []uuid.UUID
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("limit %d: more than 10 pages", limit)
			}
			page, _ := w.listThreads(t, w.sam, w.campaigns, q)
			if len(page.Items) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Items))
			}
			got = append(got, threadIDs(page.Items)...)
			if page.NextCursor == nil {
				break
			}
			if len(page.Items) != limit {
				t.Fatalf("limit %d: next_cursor on a page of %d", limit, len(page.Items))
			}
			q.Set("cursor", *page.NextCursor)
		}
		if want := threadIDs(whole.Items); !slices.Equal(got, want) {
			t.Fatalf("limit %d: paged %v, want %v", limit, got, want)
		}
	}
	capped, _ := w.listThreads(t, w.sam, w.campaigns, url.Values{"limit": {"100000"}})
	if len(capped.Items) != 7 {
		t.Fatalf("a limit above the page size lists %d, want all 7", len(capped.Items))
	}
}

// TestListChannelThreadsRefusals: a channel the actor cannot read answers the 404 of a
// missing one, byte for byte; bad parameters answer 400 naming them.
func TestListChannelThreadsRefusals(t *testing.T) {
	w := newChatWorld(t, false)
	seen := w.do(t, w.robin, http.MethodGet, threadsPath(w.tickets, nil), "")
	missing := w.do(t, w.robin, http.MethodGet, threadsPath(uuid.New(), nil), "")
	seen.RequireProblem(t, http.StatusNotFound, notFound)
	missing.RequireProblem(t, http.StatusNotFound, notFound)
	if a, b := problemBody(t, seen), problemBody(t, missing); a != b {
		t.Fatalf("an invisible channel answers\n%s\nbut a missing one\n%s", a, b)
	}
	// A direct message of Alex and Sam is invisible to Robin, and to nobody in it.
	var dm apigen.Channel
	w.must(t, w.alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.sam.id), http.StatusCreated, &dm)
	w.thread(t, w.alex, dm.Id, "Just us")
	if a, b := problemBody(t, w.do(t, w.robin, http.MethodGet, threadsPath(dm.Id, nil), "")), problemBody(t, missing); a != b {
		t.Fatalf("a direct message of others answers\n%s\nbut a missing channel\n%s", a, b)
	}
	page, _ := w.listThreads(t, w.sam, dm.Id, nil)
	if len(page.Items) != 1 || page.Items[0].SpaceId != nil {
		t.Fatalf("Sam's direct message lists %+v, want one thread without space", page.Items)
	}

	w.refuse(t,
		refusal{name: "cursor not written by the server", as: w.sam, method: http.MethodGet,
			path: threadsPath(w.campaigns, url.Values{"cursor": {"garbage"}}), status: http.StatusBadRequest, code: invalid, fields: []string{"cursor"}},
		refusal{name: "cursor too long", as: w.sam, method: http.MethodGet,
			path: threadsPath(w.campaigns, url.Values{"cursor": {strings.Repeat("a", 201)}}), status: http.StatusBadRequest, code: invalid, fields: []string{"cursor"}},
		refusal{name: "limit not a number", as: w.sam, method: http.MethodGet,
			path: threadsPath(w.campaigns, url.Values{"limit": {"ten"}}), status: http.StatusBadRequest, code: invalid, fields: []string{"limit"}},
		refusal{name: "channel id not a uuid", as: w.sam, method: http.MethodGet,
			path: "/api/v1/channels/not-a-uuid/threads", status: http.StatusBadRequest, code: invalid, fields: []string{"channel_id"}},
	)
	// Without a token: 401.
	w.do(t, worldActor{name: "nobody"}, http.MethodGet, threadsPath(w.campaigns, nil), "").RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
}

// TestListChannelThreadsCountsMatchTheSnapshot: each item's unread and mention counts are the
// snapshot's for the same thread (0 where the snapshot lists none), before and after the
// reader moves a read state. (No API raises a thread's unread floor; the chat store's tests
// hold the list's mention count to the snapshot's with floors.)
func TestListChannelThreadsCountsMatchTheSnapshot(t *testing.T) {
	w := newChatWorld(t, false)
	a := w.thread(t, w.alex, w.campaigns, "@sam have a look")
	w.post(t, w.alex, a.Id, "And @sam again")
	w.post(t, w.alex, a.Id, "No mention")
	b := w.thread(t, w.alex, w.campaigns, "Nothing for Sam")
	w.post(t, w.sam, b.Id, "Sam answers") // own posts are read
	w.grant(t, w.robin, "channel", w.campaigns, "member")
	c := w.thread(t, w.robin, w.campaigns, "@sam from Robin")

	check := func(stage string) {
		t.Helper()
		var snap apigen.Snapshot
		w.must(t, w.sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &snap)
		type counts struct{ unread, mentions int64 }
		fromSnap := map[uuid.UUID]counts{}
		for _, u := range snap.UnreadThreads {
			fromSnap[u.ThreadId] = counts{u.UnreadCount, u.MentionCount}
		}
		page, _ := w.listThreads(t, w.sam, w.campaigns, nil)
		nonZero := 0
		for _, it := range page.Items {
			got := counts{it.UnreadCount, it.MentionCount}
			if got != fromSnap[it.Id] {
				t.Fatalf("%s: thread %s lists %+v, the snapshot %+v", stage, it.Id, got, fromSnap[it.Id])
			}
			if got != (counts{}) {
				nonZero++
			}
		}
		if nonZero == 0 {
			t.Fatalf("%s: no thread with unread messages: the comparison proves nothing", stage)
		}
	}
	check("before reading")
	w.must(t, w.sam, http.MethodPut, "/api/v1/threads/"+a.Id.String()+"/read-state", `{"last_read_seq":1}`, http.StatusOK, nil)
	check("after reading the first message")
	w.must(t, w.sam, http.MethodPut, "/api/v1/threads/"+a.Id.String()+"/read-state", `{"last_read_seq":3}`, http.StatusOK, nil)
	check("after reading all")
	w.post(t, w.alex, c.Id, "@sam once more")
	check("after more mentions")
}

// TestListChannelThreadsConditional: the list answers If-None-Match with 304 while the page
// is unchanged, and a new ETag once a post or the reader's read state changes it.
func TestListChannelThreadsConditional(t *testing.T) {
	w := newChatWorld(t, false)
	_, tag := w.listThreads(t, w.sam, w.campaigns, nil)
	if tag == "" {
		t.Fatal("no ETag")
	}
	r := w.do(t, w.sam, http.MethodGet, threadsPath(w.campaigns, nil), "", "If-None-Match", tag)
	if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != tag {
		t.Fatalf("If-None-Match of the current tag: %d %q, ETag %q", r.Status, r.Body, r.Header.Get("ETag"))
	}
	w.env.Clock.Advance(time.Second)
	w.post(t, w.alex, w.campaignThread, "News")
	_, tag2 := w.listThreads(t, w.sam, w.campaigns, nil)
	if tag2 == tag {
		t.Fatal("the ETag did not change after a post")
	}
	w.must(t, w.sam, http.MethodGet, threadsPath(w.campaigns, nil), "", http.StatusOK, nil, "If-None-Match", tag)
	w.must(t, w.sam, http.MethodPut, "/api/v1/threads/"+w.campaignThread.String()+"/read-state", `{"last_read_seq":2}`, http.StatusOK, nil)
	if _, tag3 := w.listThreads(t, w.sam, w.campaigns, nil); tag3 == tag2 {
		t.Fatal("the ETag did not change after Sam read the thread")
	}
}
