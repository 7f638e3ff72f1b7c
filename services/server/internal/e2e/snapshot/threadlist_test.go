package snapshot

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
	"bothy.example.com/server/internal/e2e/e2etest"
)

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
	w := e2etest.NewChatWorld(t, false)
	// campaigns has CampaignThread (Alex's, at build time); three more, a minute apart.
	var started []apigen.Thread
	for i, title := range []string{"Launch", "Budget", "Venue"} {
		w.Env.Clock.Advance(time.Minute)
		body := fmt.Sprintf(`{"title":%q,"content_md":"%s plan number %d"}`, title, title, i)
		var th apigen.Thread
		w.Must(t, w.Alex, http.MethodPost, "/api/v1/channels/"+w.Campaigns.String()+"/threads", body, http.StatusCreated, &th)
		started = append(started, th)
	}

	page, _ := w.ListThreads(t, w.Sam, w.Campaigns, nil)
	want := []uuid.UUID{started[2].Id, started[1].Id, started[0].Id, w.CampaignThread}
	if got := threadIDs(page.Items); !slices.Equal(got, want) {
		t.Fatalf("order %v, want newest first %v", got, want)
	}
	if page.NextCursor != nil {
		t.Fatalf("next_cursor %q on a page that is not full", *page.NextCursor)
	}
	venue := page.Items[0]
	if venue.Title != "Venue" || venue.FirstMessageExcerpt != "Venue plan number 2" || venue.ReplyCount != 0 ||
		venue.LastMessageSeq != 1 || venue.FirstMessageRedacted || venue.CreatedBy != w.Alex.ID ||
		venue.SpaceId == nil || *venue.SpaceId != w.Marketing || venue.ChannelId != w.Campaigns {
		t.Fatalf("Venue item %+v", venue)
	}
	if !venue.LastMessageAt.Equal(started[2].FirstMessage.CreatedAt) {
		t.Fatalf("Venue last_message_at %v, want its first message's %v", venue.LastMessageAt, started[2].FirstMessage.CreatedAt)
	}

	// Two replies to the oldest thread: it moves to the top, with its newest message.
	w.Env.Clock.Advance(time.Minute)
	w.Post(t, w.Sam, w.CampaignThread, "A reply")
	w.Env.Clock.Advance(time.Minute)
	last := w.Post(t, w.Alex, w.CampaignThread, "Another reply")
	page, _ = w.ListThreads(t, w.Sam, w.Campaigns, nil)
	want = []uuid.UUID{w.CampaignThread, started[2].Id, started[1].Id, started[0].Id}
	if got := threadIDs(page.Items); !slices.Equal(got, want) {
		t.Fatalf("order after the replies %v, want %v", got, want)
	}
	top := page.Items[0]
	if top.ReplyCount != 2 || top.LastMessageSeq != 3 || !top.LastMessageAt.Equal(last.CreatedAt) ||
		top.FirstMessageExcerpt != w.CampaignContent {
		t.Fatalf("the replied thread %+v, want 2 replies, seq 3 at %v", top, last.CreatedAt)
	}
	// The raw JSON carries the same timestamp string as the post's answer.
	r := w.Must(t, w.Sam, http.MethodGet, e2etest.ThreadsPath(w.Campaigns, nil), "", http.StatusOK, nil)
	if stamp := last.CreatedAt.UTC().Format(time.RFC3339Nano); !strings.Contains(string(r.Body), `"last_message_at":"`+stamp+`"`) {
		t.Fatalf("the list does not carry the post's created_at %s: %s", stamp, r.Body)
	}

	// Deleting the first message empties the excerpt and marks it; an edit is no activity.
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+started[0].FirstMessage.Id.String(), "", http.StatusNoContent, nil)
	w.Env.Clock.Advance(time.Minute)
	w.Must(t, w.Alex, http.MethodPatch, "/api/v1/messages/"+started[1].FirstMessage.Id.String(), `{"content_md":"Budget, revised"}`, http.StatusOK, nil)
	page, _ = w.ListThreads(t, w.Sam, w.Campaigns, nil)
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
	w := e2etest.NewChatWorld(t, false)
	long := strings.Repeat("é", 250) // two bytes each
	var th apigen.Thread
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/channels/"+w.Campaigns.String()+"/threads", `{"content_md":"`+long+`"}`, http.StatusCreated, &th)
	page, _ := w.ListThreads(t, w.Sam, w.Campaigns, nil)
	if got := page.Items[0]; got.Id != th.Id || got.FirstMessageExcerpt != strings.Repeat("é", 200) || got.Title != "" {
		t.Fatalf("excerpt of %d characters %q, want the first 200", len([]rune(got.FirstMessageExcerpt)), got.FirstMessageExcerpt)
	}
}

// TestListChannelThreadsPaging: a small page size pages to the end, each thread once, in the
// order of the whole list, and the last page has no next_cursor; limits above the page size
// are capped, never an error.
func TestListChannelThreadsPaging(t *testing.T) {
	w := e2etest.NewChatWorld(t, false)
	for i := range 6 {
		if i%2 == 0 {
			w.Env.Clock.Advance(time.Second) // pairs share a time: the id breaks the tie
		}
		w.Thread(t, w.Alex, w.Campaigns, fmt.Sprintf("Thread %d", i))
	}
	whole, _ := w.ListThreads(t, w.Sam, w.Campaigns, nil)
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
			page, _ := w.ListThreads(t, w.Sam, w.Campaigns, q)
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
	capped, _ := w.ListThreads(t, w.Sam, w.Campaigns, url.Values{"limit": {"100000"}})
	if len(capped.Items) != 7 {
		t.Fatalf("a limit above the page size lists %d, want all 7", len(capped.Items))
	}
}

// TestListChannelThreadsRefusals: a channel the actor cannot read answers the 404 of a
// missing one, byte for byte; bad parameters answer 400 naming them.
func TestListChannelThreadsRefusals(t *testing.T) {
	w := e2etest.NewChatWorld(t, false)
	seen := w.Do(t, w.Robin, http.MethodGet, e2etest.ThreadsPath(w.Tickets, nil), "")
	missing := w.Do(t, w.Robin, http.MethodGet, e2etest.ThreadsPath(uuid.New(), nil), "")
	seen.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
	missing.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
	if a, b := e2etest.ProblemBody(t, seen), e2etest.ProblemBody(t, missing); a != b {
		t.Fatalf("an invisible channel answers\n%s\nbut a missing one\n%s", a, b)
	}
	// A direct message of Alex and Sam is invisible to Robin, and to nobody in it.
	var dm apigen.Channel
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Sam.ID), http.StatusCreated, &dm)
	w.Thread(t, w.Alex, dm.Id, "Just us")
	if a, b := e2etest.ProblemBody(t, w.Do(t, w.Robin, http.MethodGet, e2etest.ThreadsPath(dm.Id, nil), "")), e2etest.ProblemBody(t, missing); a != b {
		t.Fatalf("a direct message of others answers\n%s\nbut a missing channel\n%s", a, b)
	}
	page, _ := w.ListThreads(t, w.Sam, dm.Id, nil)
	if len(page.Items) != 1 || page.Items[0].SpaceId != nil {
		t.Fatalf("Sam's direct message lists %+v, want one thread without space", page.Items)
	}

	w.Refuse(t,
		e2etest.Refusal{Name: "cursor not written by the server", As: w.Sam, Method: http.MethodGet,
			Path: e2etest.ThreadsPath(w.Campaigns, url.Values{"cursor": {"garbage"}}), Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"cursor"}},
		e2etest.Refusal{Name: "cursor too long", As: w.Sam, Method: http.MethodGet,
			Path: e2etest.ThreadsPath(w.Campaigns, url.Values{"cursor": {strings.Repeat("a", 201)}}), Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"cursor"}},
		e2etest.Refusal{Name: "limit not a number", As: w.Sam, Method: http.MethodGet,
			Path: e2etest.ThreadsPath(w.Campaigns, url.Values{"limit": {"ten"}}), Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"limit"}},
		e2etest.Refusal{Name: "channel id not a uuid", As: w.Sam, Method: http.MethodGet,
			Path: "/api/v1/channels/not-a-uuid/threads", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"channel_id"}},
	)
	// Without a token: 401.
	w.Do(t, e2etest.Actor{Name: "nobody"}, http.MethodGet, e2etest.ThreadsPath(w.Campaigns, nil), "").RequireProblem(t, http.StatusUnauthorized, "unauthenticated")
}

// TestListChannelThreadsCountsMatchTheSnapshot: each item's unread and mention counts are the
// snapshot's for the same thread (0 where the snapshot lists none), before and after the
// reader moves a read state. (No API raises a thread's unread floor; the chat store's tests
// hold the list's mention count to the snapshot's with floors.)
func TestListChannelThreadsCountsMatchTheSnapshot(t *testing.T) {
	w := e2etest.NewChatWorld(t, false)
	a := w.Thread(t, w.Alex, w.Campaigns, "@sam have a look")
	w.Post(t, w.Alex, a.Id, "And @sam again")
	w.Post(t, w.Alex, a.Id, "No mention")
	b := w.Thread(t, w.Alex, w.Campaigns, "Nothing for Sam")
	w.Post(t, w.Sam, b.Id, "Sam answers") // own posts are read
	w.Grant(t, w.Robin, "channel", w.Campaigns, "member")
	c := w.Thread(t, w.Robin, w.Campaigns, "@sam from Robin")

	check := func(stage string) {
		t.Helper()
		var snap apigen.Snapshot
		w.Must(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &snap)
		type counts struct{ unread, mentions int64 }
		fromSnap := map[uuid.UUID]counts{}
		for _, u := range snap.UnreadThreads {
			fromSnap[u.ThreadId] = counts{u.UnreadCount, u.MentionCount}
		}
		page, _ := w.ListThreads(t, w.Sam, w.Campaigns, nil)
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
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/threads/"+a.Id.String()+"/read-state", `{"last_read_seq":1}`, http.StatusOK, nil)
	check("after reading the first message")
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/threads/"+a.Id.String()+"/read-state", `{"last_read_seq":3}`, http.StatusOK, nil)
	check("after reading all")
	w.Post(t, w.Alex, c.Id, "@sam once more")
	check("after more mentions")
}

// TestListChannelThreadsConditional: the list answers If-None-Match with 304 while the page
// is unchanged, and a new ETag once a post or the reader's read state changes it.
func TestListChannelThreadsConditional(t *testing.T) {
	w := e2etest.NewChatWorld(t, false)
	_, tag := w.ListThreads(t, w.Sam, w.Campaigns, nil)
	if tag == "" {
		t.Fatal("no ETag")
	}
	r := w.Do(t, w.Sam, http.MethodGet, e2etest.ThreadsPath(w.Campaigns, nil), "", "If-None-Match", tag)
	if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != tag {
		t.Fatalf("If-None-Match of the current tag: %d %q, ETag %q", r.Status, r.Body, r.Header.Get("ETag"))
	}
	w.Env.Clock.Advance(time.Second)
	w.Post(t, w.Alex, w.CampaignThread, "News")
	_, tag2 := w.ListThreads(t, w.Sam, w.Campaigns, nil)
	if tag2 == tag {
		t.Fatal("the ETag did not change after a post")
	}
	w.Must(t, w.Sam, http.MethodGet, e2etest.ThreadsPath(w.Campaigns, nil), "", http.StatusOK, nil, "If-None-Match", tag)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/threads/"+w.CampaignThread.String()+"/read-state", `{"last_read_seq":2}`, http.StatusOK, nil)
	if _, tag3 := w.ListThreads(t, w.Sam, w.Campaigns, nil); tag3 == tag2 {
		t.Fatal("the ETag did not change after Sam read the thread")
	}
}
