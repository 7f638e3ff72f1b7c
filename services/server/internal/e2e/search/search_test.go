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
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The integration tests of searchMessages (issue 13, deliverable 4; spec 05a "Message search",
// ADR 0024) drive the wired App over real HTTP through the validating client.

// search runs one searchMessages request as a with the parameters (name, value, ...) and
// returns the page; it fails the test unless the answer is 200.
func (w *apiWorld) search(t *testing.T, a worldActor, params ...string) apigen.SearchResults {
	t.Helper()
	var page apigen.SearchResults
	w.must(t, a, http.MethodGet, searchPath(params...), "", http.StatusOK, &page)
	return page
}

// searchAll pages through every hit of the query as a with pages of limit, checking that the
// pages follow one another in the search order without a duplicate, and returns the hits.
func (w *apiWorld) searchAll(t *testing.T, a worldActor, limit int, params ...string) []apigen.SearchHit {
	t.Helper()
	var all []apigen.SearchHit
	seen := map[uuid.UUID]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatalf("search %v as %s: more than 1000 pages", params, a.name)
		}
		p := append(slices.Clone(params), "limit", fmt.Sprint(limit))
		if cursor != "" {
			p = append(p, "cursor", cursor)
		}
		res := w.search(t, a, p...)
		if len(res.Items) > limit {
			t.Fatalf("search %v as %s: %d hits in a page of %d", params, a.name, len(res.Items), limit)
		}
		for _, h := range res.Items {
			if seen[h.Message.Id] {
				t.Fatalf("search %v as %s: message %s twice", params, a.name, h.Message.Id)
			}
			seen[h.Message.Id] = true
			if n := len(all); n > 0 && !before(all[n-1], h) {
				t.Fatalf("search %v as %s: hit %s (rank %v) after %s (rank %v), out of order", params, a.name, h.Message.Id, h.Rank, all[n-1].Message.Id, all[n-1].Rank)
			}
			all = append(all, h)
		}
		if res.NextCursor == nil {
			return all
		}
		cursor = *res.NextCursor
	}
}

// before reports whether hit a comes before hit b in the search order: rank descending, then
// message id descending.
func before(a, b apigen.SearchHit) bool {
	if a.Rank != b.Rank {
		return a.Rank > b.Rank
	}
	return strings.Compare(a.Message.Id.String(), b.Message.Id.String()) > 0
}

// searchPath is the path of searchMessages with the query parameters (name, value, ...).
func searchPath(params ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		v.Add(params[i], params[i+1])
	}
	return "/api/v1/search/messages?" + v.Encode()
}

// hitIDs returns the message ids of the hits, in order.
func hitIDs(hits []apigen.SearchHit) []uuid.UUID {
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = h.Message.Id
	}
	return out
}

// excerptText joins an excerpt's segments and lists its matched ones.
func excerptText(h apigen.SearchHit) (text string, matched []string) {
	var b strings.Builder
	for _, s := range h.Excerpt {
		b.WriteString(s.Text)
		if s.Match {
			matched = append(matched, s.Text)
		}
	}
	return b.String(), matched
}

// sameIDs reports whether the two lists hold the same ids, in any order.
func sameIDs(a, b []uuid.UUID) bool {
	key := func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) }
	return slices.Equal(slices.SortedFunc(slices.Values(a), key), slices.SortedFunc(slices.Values(b), key))
}

func TestSearchMessagesFindsRanksAndHighlights(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	// The ticket thread's first message is "The printer on floor 2 is jammed".
	thrice := w.post(t, w.alex, w.ticketThread, "printer, printer and the printer again")
	markup := w.post(t, w.alex, w.ticketThread, `<b onclick="x()">Printer</b> & toner`)
	w.post(t, w.alex, w.ticketThread, "Nothing to see here")
	campaign := w.post(t, w.alex, w.campaignThread, "The printer for the flyers")

	hits := w.search(t, w.sam, "q", "printer").Items
	want := []uuid.UUID{thrice.Id, w.ticketFirstMsg, markup.Id, campaign.Id}
	if !sameIDs(hitIDs(hits), want) {
		t.Fatalf("Sam's hits = %v, want %v", hitIDs(hits), want)
	}
	if hits[0].Message.Id != thrice.Id {
		t.Errorf("first hit = %s, want the message with three matches %s", hits[0].Message.Id, thrice.Id)
	}
	for i := 1; i < len(hits); i++ {
		if !before(hits[i-1], hits[i]) {
			t.Errorf("hits %d and %d out of order: ranks %v, %v", i-1, i, hits[i-1].Rank, hits[i].Rank)
		}
	}
	for _, h := range hits {
		text, matched := excerptText(h)
		if h.Message.Id != markup.Id && text != h.Message.ContentMd {
			t.Errorf("excerpt of %s = %q, want the whole short text %q", h.Message.Id, text, h.Message.ContentMd)
		}
		if len(matched) == 0 {
			t.Errorf("excerpt of %s marks no match: %+v", h.Message.Id, h.Excerpt)
		}
		for _, m := range matched {
			if !strings.EqualFold(m, "printer") {
				t.Errorf("excerpt of %s marks %q, want only printer", h.Message.Id, m)
			}
		}
		if h.Message.SpaceId == nil || h.Rank <= 0 {
			t.Errorf("hit %s: space %v, rank %v", h.Message.Id, h.Message.SpaceId, h.Rank)
		}
	}
	// ts_headline leaves HTML-like tags out of an excerpt (they are not words), and the rest is
	// plain text, never escaped: a client shows it as text.
	for _, h := range hits {
		if h.Message.Id == markup.Id {
			text, matched := excerptText(h)
			if strings.Contains(text, "<b") || !strings.Contains(text, "& toner") || !slices.Equal(matched, []string{"Printer"}) {
				t.Errorf("excerpt of the markup message = %q, matches %q", text, matched)
			}
		}
	}

	// A phrase, and two words that must both occur.
	if got := hitIDs(w.search(t, w.sam, "q", `"floor 2"`).Items); !sameIDs(got, []uuid.UUID{w.ticketFirstMsg}) {
		t.Errorf(`"floor 2" finds %v, want the first ticket message`, got)
	}
	if got := hitIDs(w.search(t, w.sam, "q", "printer flyers").Items); !sameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("printer flyers finds %v, want the campaign message", got)
	}
	if got := hitIDs(w.search(t, w.sam, "q", "printer -jammed -again -toner").Items); !sameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("printer without jammed, again and toner finds %v, want the campaign message", got)
	}
	// Robin holds no grant: nothing, and no next_cursor.
	if res := w.search(t, w.robin, "q", "printer"); len(res.Items) != 0 || res.NextCursor != nil {
		t.Errorf("Robin finds %v", hitIDs(res.Items))
	}
	// A grant on the channel lets Robin find its messages at once, and only those.
	g := w.grant(t, w.robin, "channel", w.campaigns, "viewer")
	if got := hitIDs(w.search(t, w.robin, "q", "printer").Items); !sameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("Robin with a grant on campaigns finds %v, want %v", got, campaign.Id)
	}
	w.revoke(t, g)
	if got := w.search(t, w.robin, "q", "printer").Items; len(got) != 0 {
		t.Errorf("Robin after the revoke finds %v", hitIDs(got))
	}
}

func TestSearchMessagesFilters(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	w.grant(t, w.sam, "channel", w.tickets, "member")
	start := w.env.Clock.Now()
	w.env.Clock.Advance(time.Minute)
	early := w.post(t, w.alex, w.ticketThread, "kettle one")
	w.env.Clock.Advance(time.Minute)
	mid := w.post(t, w.sam, w.ticketThread, "kettle two")
	w.env.Clock.Advance(time.Minute)
	other := w.thread(t, w.alex, w.tickets, "kettle three")
	w.env.Clock.Advance(time.Minute)
	campaign := w.post(t, w.sam, w.campaignThread, "kettle four")
	all := []uuid.UUID{early.Id, mid.Id, other.FirstMessage.Id, campaign.Id}

	ts := func(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name   string
		params []string
		want   []uuid.UUID
	}{
		{"none", nil, all},
		{"space", []string{"space_id", w.marketing.String()}, []uuid.UUID{campaign.Id}},
		{"channel", []string{"channel_id", w.tickets.String()}, []uuid.UUID{early.Id, mid.Id, other.FirstMessage.Id}},
		{"thread", []string{"thread_id", w.ticketThread.String()}, []uuid.UUID{early.Id, mid.Id}},
		{"author", []string{"author_id", w.sam.id.String()}, []uuid.UUID{mid.Id, campaign.Id}},
		{"after", []string{"after", ts(mid.CreatedAt)}, []uuid.UUID{other.FirstMessage.Id, campaign.Id}},
		{"before", []string{"before", ts(mid.CreatedAt)}, []uuid.UUID{early.Id}},
		{"window", []string{"after", ts(start), "before", ts(other.FirstMessage.CreatedAt)}, []uuid.UUID{early.Id, mid.Id}},
		{"together", []string{"channel_id", w.tickets.String(), "author_id", w.alex.id.String()}, []uuid.UUID{early.Id, other.FirstMessage.Id}},
		{"unknown channel", []string{"channel_id", uuid.NewString()}, nil},
		{"space and another space's channel", []string{"space_id", w.support.String(), "channel_id", w.campaigns.String()}, nil},
	} {
		got := hitIDs(w.search(t, w.sam, append([]string{"q", "kettle"}, tc.params...)...).Items)
		if !sameIDs(got, tc.want) {
			t.Errorf("%s: hits %v, want %v", tc.name, got, tc.want)
		}
	}
	// A filter naming a channel Robin cannot see finds nothing, like one that does not exist.
	if got := w.search(t, w.robin, "q", "kettle", "channel_id", w.tickets.String()).Items; len(got) != 0 {
		t.Errorf("Robin filtering on tickets finds %v", hitIDs(got))
	}
}

func TestSearchMessagesPagesToTheEnd(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false, wiretest.WithSetting(chatapp.KeySearchPageSize, "4"))
	var want []uuid.UUID
	for i := range 11 {
		// Ranks differ by repetition; several share one, so the id decides among them.
		want = append(want, w.post(t, w.alex, w.ticketThread, strings.Repeat("boiler ", 1+i%3)+"check").Id)
	}
	w.post(t, w.alex, w.ticketThread, "unrelated")
	for _, limit := range []int{1, 2, 3, 4} {
		got := hitIDs(w.searchAll(t, w.sam, limit, "q", "boiler"))
		if !sameIDs(got, want) || len(got) != len(want) {
			t.Errorf("paging by %d: %d hits %v, want %d", limit, len(got), got, len(want))
		}
	}
	// limit above chat.search_page_size is capped to it, as is none.
	for _, limit := range []string{"", "100", "0", "-3"} {
		params := []string{"q", "boiler"}
		if limit != "" {
			params = append(params, "limit", limit)
		}
		res := w.search(t, w.sam, params...)
		if len(res.Items) != 4 || res.NextCursor == nil {
			t.Errorf("limit %q: %d hits, next_cursor %v; want a full page of 4", limit, len(res.Items), res.NextCursor)
		}
	}
}

func TestSearchMessagesFollowsEditsAndDeletes(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	m := w.post(t, w.alex, w.ticketThread, "the kettle needs descaling")
	if got := hitIDs(w.search(t, w.sam, "q", "descaling").Items); !sameIDs(got, []uuid.UUID{m.Id}) {
		t.Fatalf("before the edit: %v", got)
	}
	w.must(t, w.alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"the coffee machine needs cleaning"}`, http.StatusOK, nil)
	if got := w.search(t, w.sam, "q", "descaling").Items; len(got) != 0 {
		t.Errorf("the old text is still found: %v", hitIDs(got))
	}
	hits := w.search(t, w.sam, "q", "coffee").Items
	if !sameIDs(hitIDs(hits), []uuid.UUID{m.Id}) || hits[0].Message.EditedAt == nil {
		t.Fatalf("the new text: %+v", hits)
	}
	w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	for _, q := range []string{"coffee", "descaling", "cleaning"} {
		if got := w.search(t, w.alex, "q", q).Items; len(got) != 0 {
			t.Errorf("a deleted message is found by %q: %v", q, hitIDs(got))
		}
	}
}

func TestSearchMessagesKeepsDirectMessagesPrivate(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	var dm apigen.Channel
	w.must(t, w.sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.robin.id), http.StatusCreated, &dm)
	th := w.thread(t, w.sam, dm.Id, "a secret plan for the party")
	if got := hitIDs(w.search(t, w.robin, "q", "party").Items); !sameIDs(got, []uuid.UUID{th.FirstMessage.Id}) {
		t.Errorf("Robin, a participant, finds %v", got)
	}
	// The owner's instance role does not reach a direct message (spec 04).
	if got := w.search(t, w.alex, "q", "party").Items; len(got) != 0 {
		t.Errorf("Alex, the owner, finds the direct message: %v", hitIDs(got))
	}
}

func TestSearchMessagesNeedsMessagesReadForApps(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	without := w.app(t, "Deploy bot", "deploy-bot", "messages:write")
	with := w.app(t, "Digest bot", "digest-bot", "messages:read")
	w.grant(t, without, "channel", w.tickets, "member")
	w.grant(t, with, "channel", w.tickets, "viewer")
	w.refuse(t, refusal{name: "app without messages:read", as: without, method: http.MethodGet, path: searchPath("q", "printer"), status: http.StatusForbidden, code: forbidden})
	if got := hitIDs(w.search(t, with, "q", "printer").Items); !sameIDs(got, []uuid.UUID{w.ticketFirstMsg}) {
		t.Errorf("the app with messages:read finds %v", got)
	}
}

func TestSearchMessagesRefusesBadParameters(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false, wiretest.WithSetting(chatapp.KeySearchQueryMaxChars, "10"))
	now := time.Now().UTC()
	bad := func(name string, field string, params ...string) refusal {
		return refusal{name: name, as: w.sam, method: http.MethodGet, path: searchPath(params...), status: http.StatusBadRequest, code: invalid, fields: []string{field}}
	}
	w.refuse(t,
		bad("no q", "q"),
		bad("blank q", "q", "q", "   "),
		bad("q longer than chat.search_query_max_chars", "q", "q", "printer jam"),
		bad("q with a control character", "q", "q", "print\x01er"),
		bad("q only punctuation", "q", "q", "!!! ???"),
		bad("q only excluded words", "q", "q", "-printer"),
		bad("cursor not a cursor", "cursor", "q", "printer", "cursor", "not-a-cursor"),
		bad("cursor of another shape", "cursor", "q", "printer", "cursor", "AAAA"),
		bad("before not after after", "before", "q", "printer", "before", now.Format(time.RFC3339), "after", now.Format(time.RFC3339)),
		bad("space_id not a uuid", "space_id", "q", "printer", "space_id", "nope"),
		bad("channel_id not a uuid", "channel_id", "q", "printer", "channel_id", "nope"),
		bad("thread_id not a uuid", "thread_id", "q", "printer", "thread_id", "nope"),
		bad("author_id not a uuid", "author_id", "q", "printer", "author_id", "nope"),
		bad("before not a time", "before", "q", "printer", "before", "yesterday"),
		bad("after not a time", "after", "q", "printer", "after", "yesterday"),
		bad("limit not a number", "limit", "q", "printer", "limit", "many"),
	)
	w.refuse(t, refusal{name: "no token", method: http.MethodGet, path: searchPath("q", "printer"), status: http.StatusUnauthorized, code: "unauthenticated"})
	// Exactly chat.search_query_max_chars characters pass, counted as characters.
	w.search(t, w.sam, "q", "printerééé")
}
