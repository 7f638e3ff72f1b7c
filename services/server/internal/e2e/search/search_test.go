package search

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/wiretest"
)

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

func TestSearchMessagesFindsRanksAndHighlights(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	// The ticket thread's first message is "The printer on floor 2 is jammed".
	thrice := w.Post(t, w.Alex, w.TicketThread, "printer, printer and the printer again")
	markup := w.Post(t, w.Alex, w.TicketThread, `<b onclick="x()">Printer</b> & toner`)
	w.Post(t, w.Alex, w.TicketThread, "Nothing to see here")
	campaign := w.Post(t, w.Alex, w.CampaignThread, "The printer for the flyers")

	hits := w.Search(t, w.Sam, "q", "printer").Items
	want := []uuid.UUID{thrice.Id, w.TicketFirstMsg, markup.Id, campaign.Id}
	if !e2etest.SameIDs(e2etest.HitIDs(hits), want) {
		t.Fatalf("Sam's hits = %v, want %v", e2etest.HitIDs(hits), want)
	}
	if hits[0].Message.Id != thrice.Id {
		t.Errorf("first hit = %s, want the message with three matches %s", hits[0].Message.Id, thrice.Id)
	}
	for i := 1; i < len(hits); i++ {
		if !e2etest.Before(hits[i-1], hits[i]) {
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
	if got := e2etest.HitIDs(w.Search(t, w.Sam, "q", `"floor 2"`).Items); !e2etest.SameIDs(got, []uuid.UUID{w.TicketFirstMsg}) {
		t.Errorf(`"floor 2" finds %v, want the first ticket message`, got)
	}
	if got := e2etest.HitIDs(w.Search(t, w.Sam, "q", "printer flyers").Items); !e2etest.SameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("printer flyers finds %v, want the campaign message", got)
	}
	if got := e2etest.HitIDs(w.Search(t, w.Sam, "q", "printer -jammed -again -toner").Items); !e2etest.SameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("printer without jammed, again and toner finds %v, want the campaign message", got)
	}
	// Robin holds no grant: nothing, and no next_cursor.
	if res := w.Search(t, w.Robin, "q", "printer"); len(res.Items) != 0 || res.NextCursor != nil {
		t.Errorf("Robin finds %v", e2etest.HitIDs(res.Items))
	}
	// A grant on the channel lets Robin find its messages at once, and only those.
	g := w.Grant(t, w.Robin, "channel", w.Campaigns, "viewer")
	if got := e2etest.HitIDs(w.Search(t, w.Robin, "q", "printer").Items); !e2etest.SameIDs(got, []uuid.UUID{campaign.Id}) {
		t.Errorf("Robin with a grant on campaigns finds %v, want %v", got, campaign.Id)
	}
	w.Revoke(t, g)
	if got := w.Search(t, w.Robin, "q", "printer").Items; len(got) != 0 {
		t.Errorf("Robin after the revoke finds %v", e2etest.HitIDs(got))
	}
}

func TestSearchMessagesFilters(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	w.Grant(t, w.Sam, "channel", w.Tickets, "member")
	start := w.Env.Clock.Now()
	w.Env.Clock.Advance(time.Minute)
	early := w.Post(t, w.Alex, w.TicketThread, "kettle one")
	w.Env.Clock.Advance(time.Minute)
	mid := w.Post(t, w.Sam, w.TicketThread, "kettle two")
	w.Env.Clock.Advance(time.Minute)
	other := w.Thread(t, w.Alex, w.Tickets, "kettle three")
	w.Env.Clock.Advance(time.Minute)
	campaign := w.Post(t, w.Sam, w.CampaignThread, "kettle four")
	all := []uuid.UUID{early.Id, mid.Id, other.FirstMessage.Id, campaign.Id}

	ts := func(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name   string
		params []string
		want   []uuid.UUID
	}{
		{"none", nil, all},
		{"space", []string{"space_id", w.Marketing.String()}, []uuid.UUID{campaign.Id}},
		{"channel", []string{"channel_id", w.Tickets.String()}, []uuid.UUID{early.Id, mid.Id, other.FirstMessage.Id}},
		{"thread", []string{"thread_id", w.TicketThread.String()}, []uuid.UUID{early.Id, mid.Id}},
		{"author", []string{"author_id", w.Sam.ID.String()}, []uuid.UUID{mid.Id, campaign.Id}},
		{"after", []string{"after", ts(mid.CreatedAt)}, []uuid.UUID{other.FirstMessage.Id, campaign.Id}},
		{"before", []string{"before", ts(mid.CreatedAt)}, []uuid.UUID{early.Id}},
		{"window", []string{"after", ts(start), "before", ts(other.FirstMessage.CreatedAt)}, []uuid.UUID{early.Id, mid.Id}},
		{"together", []string{"channel_id", w.Tickets.String(), "author_id", w.Alex.ID.String()}, []uuid.UUID{early.Id, other.FirstMessage.Id}},
		{"unknown channel", []string{"channel_id", uuid.NewString()}, nil},
		{"space and another space's channel", []string{"space_id", w.Support.String(), "channel_id", w.Campaigns.String()}, nil},
	} {
		got := e2etest.HitIDs(w.Search(t, w.Sam, append([]string{"q", "kettle"}, tc.params...)...).Items)
		if !e2etest.SameIDs(got, tc.want) {
			t.Errorf("%s: hits %v, want %v", tc.name, got, tc.want)
		}
	}
	// A filter naming a channel Robin cannot see finds nothing, like one that does not exist.
	if got := w.Search(t, w.Robin, "q", "kettle", "channel_id", w.Tickets.String()).Items; len(got) != 0 {
		t.Errorf("Robin filtering on tickets finds %v", e2etest.HitIDs(got))
	}
}

func TestSearchMessagesPagesToTheEnd(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false, wiretest.WithSetting(chatapp.KeySearchPageSize, "4"))
	var want []uuid.UUID
	for i := range 11 {
		// Ranks differ by repetition; several share one, so the id decides among them.
		want = append(want, w.Post(t, w.Alex, w.TicketThread, strings.Repeat("boiler ", 1+i%3)+"check").Id)
	}
	w.Post(t, w.Alex, w.TicketThread, "unrelated")
	for _, limit := range []int{1, 2, 3, 4} {
		got := e2etest.HitIDs(w.SearchAll(t, w.Sam, limit, "q", "boiler"))
		if !e2etest.SameIDs(got, want) || len(got) != len(want) {
			t.Errorf("paging by %d: %d hits %v, want %d", limit, len(got), got, len(want))
		}
	}
	// limit above chat.search_page_size is capped to it, as is none.
	for _, limit := range []string{"", "100", "0", "-3"} {
		params := []string{"q", "boiler"}
		if limit != "" {
			params = append(params, "limit", limit)
		}
		res := w.Search(t, w.Sam, params...)
		if len(res.Items) != 4 || res.NextCursor == nil {
			t.Errorf("limit %q: %d hits, next_cursor %v; want a full page of 4", limit, len(res.Items), res.NextCursor)
		}
	}
}

func TestSearchMessagesFollowsEditsAndDeletes(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	m := w.Post(t, w.Alex, w.TicketThread, "the kettle needs descaling")
	if got := e2etest.HitIDs(w.Search(t, w.Sam, "q", "descaling").Items); !e2etest.SameIDs(got, []uuid.UUID{m.Id}) {
		t.Fatalf("before the edit: %v", got)
	}
	w.Must(t, w.Alex, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"the coffee machine needs cleaning"}`, http.StatusOK, nil)
	if got := w.Search(t, w.Sam, "q", "descaling").Items; len(got) != 0 {
		t.Errorf("the old text is still found: %v", e2etest.HitIDs(got))
	}
	hits := w.Search(t, w.Sam, "q", "coffee").Items
	if !e2etest.SameIDs(e2etest.HitIDs(hits), []uuid.UUID{m.Id}) || hits[0].Message.EditedAt == nil {
		t.Fatalf("the new text: %+v", hits)
	}
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	for _, q := range []string{"coffee", "descaling", "cleaning"} {
		if got := w.Search(t, w.Alex, "q", q).Items; len(got) != 0 {
			t.Errorf("a deleted message is found by %q: %v", q, e2etest.HitIDs(got))
		}
	}
}

func TestSearchMessagesKeepsDirectMessagesPrivate(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	var dm apigen.Channel
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/dms", fmt.Sprintf(`{"participant_ids":[%q]}`, w.Robin.ID), http.StatusCreated, &dm)
	th := w.Thread(t, w.Sam, dm.Id, "a secret plan for the party")
	if got := e2etest.HitIDs(w.Search(t, w.Robin, "q", "party").Items); !e2etest.SameIDs(got, []uuid.UUID{th.FirstMessage.Id}) {
		t.Errorf("Robin, a participant, finds %v", got)
	}
	// The owner's instance role does not reach a direct message (spec 04).
	if got := w.Search(t, w.Alex, "q", "party").Items; len(got) != 0 {
		t.Errorf("Alex, the owner, finds the direct message: %v", e2etest.HitIDs(got))
	}
}

func TestSearchMessagesNeedsMessagesReadForApps(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	without := w.App(t, "Deploy bot", "deploy-bot", "messages:write")
	with := w.App(t, "Digest bot", "digest-bot", "messages:read")
	w.Grant(t, without, "channel", w.Tickets, "member")
	w.Grant(t, with, "channel", w.Tickets, "viewer")
	w.Refuse(t, e2etest.Refusal{Name: "app without messages:read", As: without, Method: http.MethodGet, Path: e2etest.SearchPath("q", "printer"), Status: http.StatusForbidden, Code: e2etest.Forbidden})
	if got := e2etest.HitIDs(w.Search(t, with, "q", "printer").Items); !e2etest.SameIDs(got, []uuid.UUID{w.TicketFirstMsg}) {
		t.Errorf("the app with messages:read finds %v", got)
	}
}

func TestSearchMessagesRefusesBadParameters(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false, wiretest.WithSetting(chatapp.KeySearchQueryMaxChars, "10"))
	now := time.Now().UTC()
	bad := func(name string, field string, params ...string) e2etest.Refusal {
		return e2etest.Refusal{Name: name, As: w.Sam, Method: http.MethodGet, Path: e2etest.SearchPath(params...), Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{field}}
	}
	w.Refuse(t,
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
	w.Refuse(t, e2etest.Refusal{Name: "no token", Method: http.MethodGet, Path: e2etest.SearchPath("q", "printer"), Status: http.StatusUnauthorized, Code: "unauthenticated"})
	// Exactly chat.search_query_max_chars characters pass, counted as characters.
	w.Search(t, w.Sam, "q", "printerééé")
}
