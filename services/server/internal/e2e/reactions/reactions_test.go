package reactions

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

// The integration tests of reactions (ADR 0025) drive addReaction and removeReaction
// over real HTTP, read the counts through listMessages and the events through the log,
// catch-up and the gateway.

const thumbsUp = "\U0001F44D"

func requireReactions(t *testing.T, who string, got []apigen.ReactionCount, want ...apigen.ReactionCount) {
	t.Helper()
	if want == nil {
		want = []apigen.ReactionCount{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s reads reactions %+v, want %+v", who, got, want)
	}
}

// TestReactionsAddRemoveAndCount: Sam (a member of Marketing) and Alex react to the first
// message of campaigns; adding twice and removing what one has not made change nothing and
// append nothing; each reader's listMessages counts them with its own me.
func TestReactionsAddRemoveAndCount(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	msg, thread := w.CampaignFirstMsg, w.CampaignThread
	ev := func(a e2etest.Actor, typ string) e2etest.WantEvent {
		return e2etest.WantEvent{Typ: typ, Kind: kernel.ResourceMessage, ID: msg, Space: w.Marketing, Channel: w.Campaigns, Thread: thread, Actor: a.ID}
	}
	payload := func(a e2etest.Actor, reaction string) map[string]any {
		return map[string]any{
			"message_id": msg.String(), "thread_id": thread.String(), "channel_id": w.Campaigns.String(),
			"principal_id": a.ID.String(), "reaction": reaction,
		}
	}
	requireReactions(t, "Sam before any reaction", w.ReactionsOf(t, w.Sam, thread, msg))

	h := w.Head(t)
	r := w.React(t, w.Sam, http.MethodPut, msg, ":thumbs_up:")
	got := w.ExpectEvents(t, h, r, ev(w.Sam, "reaction.added"))
	e2etest.RequirePayload(t, got[0], payload(w.Sam, ":thumbs_up:"))

	// Again: the same state, no second event.
	h = w.Head(t)
	w.React(t, w.Sam, http.MethodPut, msg, ":thumbs_up:")
	w.ExpectNone(t, h, "adding a reaction twice")

	// Alex makes the same shortcode, the emoji (percent-encoded in the path) and :+1: (a plus
	// sign in a path is a plus sign).
	for _, reaction := range []string{":thumbs_up:", thumbsUp, ":+1:"} {
		h = w.Head(t)
		r = w.React(t, w.Alex, http.MethodPut, msg, reaction)
		got = w.ExpectEvents(t, h, r, ev(w.Alex, "reaction.added"))
		e2etest.RequirePayload(t, got[0], payload(w.Alex, reaction))
	}
	h = w.Head(t)
	w.Must(t, w.Alex, http.MethodPut, "/api/v1/messages/"+msg.String()+"/reactions/:+1:", "", http.StatusNoContent, nil)
	w.ExpectNone(t, h, "adding :+1: again with the plus sign unencoded")

	requireReactions(t, "Sam", w.ReactionsOf(t, w.Sam, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 2, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: false},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: false})
	requireReactions(t, "Alex", w.ReactionsOf(t, w.Alex, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 2, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: true},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: true})

	// Sam takes his back: one event; again, or a reaction he never made: none.
	h = w.Head(t)
	r = w.React(t, w.Sam, http.MethodDelete, msg, ":thumbs_up:")
	got = w.ExpectEvents(t, h, r, ev(w.Sam, "reaction.removed"))
	e2etest.RequirePayload(t, got[0], payload(w.Sam, ":thumbs_up:"))
	h = w.Head(t)
	w.React(t, w.Sam, http.MethodDelete, msg, ":thumbs_up:")
	w.React(t, w.Sam, http.MethodDelete, msg, thumbsUp)
	w.React(t, w.Sam, http.MethodDelete, msg, ":never_made:")
	w.ExpectNone(t, h, "removing reactions one has not made")
	requireReactions(t, "Sam after taking his back", w.ReactionsOf(t, w.Sam, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 1, Me: false},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: false},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: false})

	// editMessage answers the message with its reactions, counted for the editor.
	var edited apigen.Message
	w.Must(t, w.Alex, http.MethodPatch, "/api/v1/messages/"+msg.String(), `{"content_md":"Spring launch moved"}`, http.StatusOK, &edited)
	requireReactions(t, "Alex's edit", edited.Reactions,
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 1, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: true},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: true})
	// A new message has none.
	posted := w.Post(t, w.Sam, thread, "No reactions yet")
	requireReactions(t, "a new message", posted.Reactions)
}

// TestReactionRefusals: a bad reaction is 400 naming reaction; a viewer may read but not
// react (403); who cannot read the message gets the 404 of a message that does not exist;
// a deleted message and an archived channel are 409; the distinct limit is 409. None appends
// anything.
func TestReactionRefusals(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false, wiretest.WithSetting(chatapp.KeyMaxReactionsPerMessage, "2"))
	msg := w.CampaignFirstMsg
	random := uuid.New()
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		h := w.Head(t)
		for _, bad := range []string{"thumbs up", "::", ":Thumbs_Up:", thumbsUp + thumbsUp, thumbsUp + " ", "\U0001F1F3", strings.Repeat("a", 65)} {
			p := w.Do(t, w.Sam, method, e2etest.ReactionPath(msg, bad), "").RequireProblem(t, http.StatusBadRequest, e2etest.Invalid)
			if len(p.Errors) != 1 || p.Errors[0].Field != "reaction" {
				t.Fatalf("%s %q: errors %+v, want one naming reaction", method, bad, p.Errors)
			}
		}
		// Sam only views Support.
		w.Do(t, w.Sam, method, e2etest.ReactionPath(w.TicketFirstMsg, ":ok:"), "").RequireProblem(t, http.StatusForbidden, e2etest.Forbidden)
		// Robin reads nothing: Support's message is a random one to him, also with a bad
		// reaction.
		for _, reaction := range []string{":ok:", "bad"} {
			seen := w.Do(t, w.Robin, method, e2etest.ReactionPath(w.TicketFirstMsg, reaction), "")
			missing := w.Do(t, w.Robin, method, e2etest.ReactionPath(random, reaction), "")
			seen.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
			missing.RequireProblem(t, http.StatusNotFound, e2etest.NotFound)
			if a, b := e2etest.ProblemBody(t, seen), e2etest.ProblemBody(t, missing); a != b {
				t.Fatalf("%s %q as Robin: Support's message answers\n%s\nbut a random id\n%s", method, reaction, a, b)
			}
		}
		w.ExpectNone(t, h, method+" refusals")
	}

	// The distinct limit (2 here): a third distinct reaction is refused, an existing one is
	// still taken.
	w.React(t, w.Alex, http.MethodPut, msg, ":one:")
	w.React(t, w.Alex, http.MethodPut, msg, ":two:")
	h := w.Head(t)
	w.Do(t, w.Sam, http.MethodPut, e2etest.ReactionPath(msg, ":three:"), "").RequireProblem(t, http.StatusConflict, e2etest.Conflict)
	w.ExpectNone(t, h, "a reaction beyond chat.max_reactions_per_message")
	w.React(t, w.Sam, http.MethodPut, msg, ":two:")

	// A deleted message has no reactions: adding is 409, removing changes nothing.
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+msg.String(), "", http.StatusNoContent, nil)
	requireReactions(t, "Sam on the deleted message", w.ReactionsOf(t, w.Sam, w.CampaignThread, msg))
	h = w.Head(t)
	w.Do(t, w.Sam, http.MethodPut, e2etest.ReactionPath(msg, ":two:"), "").RequireProblem(t, http.StatusConflict, e2etest.Conflict)
	w.React(t, w.Sam, http.MethodDelete, msg, ":two:")
	w.ExpectNone(t, h, "reactions on a deleted message")

	// An archived channel takes no reaction changes.
	second := w.Post(t, w.Alex, w.CampaignThread, "Still here")
	w.React(t, w.Sam, http.MethodPut, second.Id, ":ok:")
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/channels/"+w.Campaigns.String()+"/archive", "", http.StatusOK, nil)
	h = w.Head(t)
	w.Do(t, w.Sam, http.MethodPut, e2etest.ReactionPath(second.Id, ":wave:"), "").RequireProblem(t, http.StatusConflict, e2etest.Conflict)
	w.Do(t, w.Sam, http.MethodDelete, e2etest.ReactionPath(second.Id, ":ok:"), "").RequireProblem(t, http.StatusConflict, e2etest.Conflict)
	w.ExpectNone(t, h, "reactions in an archived channel")
}

// TestDeletingAMessageRedactsItsReactionEvents: reaction events are the message's events, so
// its deletion reduces them to their ids in the log like message.created.
func TestDeletingAMessageRedactsItsReactionEvents(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	msg := w.CampaignFirstMsg
	h := w.Head(t)
	w.React(t, w.Sam, http.MethodPut, msg, ":thumbs_up:")
	w.React(t, w.Sam, http.MethodDelete, msg, ":thumbs_up:")
	w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+msg.String(), "", http.StatusNoContent, nil)
	events := w.EventsAfter(t, h)
	if len(events) != 3 {
		t.Fatalf("events %s, want the two reaction events and message.deleted", e2etest.Describe(events))
	}
	for _, e := range events[:2] {
		if !e.Redacted {
			t.Fatalf("%s of the deleted message is not redacted", e.Type)
		}
		e2etest.RequirePayload(t, e, map[string]any{
			"message_id": msg.String(), "thread_id": w.CampaignThread.String(), "channel_id": w.Campaigns.String(),
			"principal_id": w.Sam.ID.String(),
		})
	}
}

// TestReactionEventsReachReadersOnly: Sam reads both channels and gets both reactions, through
// catch-up and live on the gateway; Robin, a viewer of Support only, gets the one on Support's
// message and never the one on Marketing's, through either.
func TestReactionEventsReachReadersOnly(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	w.Grant(t, w.Robin, "space", w.Support, "viewer")
	h := w.Head(t)
	sam := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	sam.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, h))
	robin := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	robin.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, h))

	w.React(t, w.Sam, http.MethodPut, w.CampaignFirstMsg, ":thumbs_up:")
	w.React(t, w.Alex, http.MethodPut, w.TicketFirstMsg, thumbsUp)
	w.React(t, w.Sam, http.MethodDelete, w.CampaignFirstMsg, ":thumbs_up:")
	w.React(t, w.Alex, http.MethodDelete, w.TicketFirstMsg, thumbsUp)
	final := w.Head(t)
	stored := w.EventsAfter(t, h)
	if len(stored) != 4 {
		t.Fatalf("events %s, want four reaction events", e2etest.Describe(stored))
	}
	onTickets := e2etest.StoredWhere(stored, func(e syncdomain.StoredEvent) bool { return e.ChannelID == w.Tickets })

	for _, c := range []struct {
		who  e2etest.Actor
		conn *e2etest.GatewayClient
		want []syncdomain.StoredEvent
	}{
		{w.Sam, sam, stored},
		{w.Robin, robin, onTickets},
	} {
		wantSeqs := e2etest.StoredSeqs(c.want)
		if got := w.RestEvents(t, c.who, h, final); !slices.Equal(got, wantSeqs) {
			t.Errorf("listEvents gives %s %v, want %v (%s)", c.who.Name, got, wantSeqs, e2etest.Describe(c.want))
		}
		// The last event (on tickets) is one each may read, so the connection reaches it.
		live, _ := c.conn.Until(final, false)
		if got := e2etest.GatewaySeqs(live); !slices.Equal(got, wantSeqs) {
			t.Errorf("the gateway gives %s %v, want %v", c.who.Name, got, wantSeqs)
		}
		for i, e := range live {
			if i < len(c.want) && e.Type != c.want[i].Type {
				t.Errorf("the gateway's event %d for %s is %s, want %s", e.Seq, c.who.Name, e.Type, c.want[i].Type)
			}
		}
	}
}

// TestConcurrentReactionsKeepTheLimit: eight principals add eight different reactions to one
// message at once, with chat.max_reactions_per_message at 3: the message's row lock makes them
// run one after the other, so exactly three are taken, each with its one event, and the other
// five are 409 without an event.
func TestConcurrentReactionsKeepTheLimit(t *testing.T) {
	t.Parallel()
	const limit, n = 3, 8
	w := e2etest.NewChatWorld(t, false, wiretest.WithSetting(chatapp.KeyMaxReactionsPerMessage, fmt.Sprint(limit)))
	reactors := make([]e2etest.Actor, n)
	for i := range reactors {
		reactors[i] = w.Person(t, fmt.Sprintf("Reactor %d", i), fmt.Sprintf("reactor%d", i))
		w.Grant(t, reactors[i], "channel", w.Campaigns, "member")
	}
	h := w.Head(t)
	statuses := make(chan int, n)
	client := w.Env.Server.Client()
	start := make(chan struct{})
	for i, a := range reactors {
		go func() {
			<-start
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPut,
				w.Env.Server.URL+e2etest.ReactionPath(w.CampaignFirstMsg, fmt.Sprintf(":r%d:", i)), nil)
			if err != nil {
				statuses <- 0
				return
			}
			req.Header.Set("Authorization", "Bearer "+a.Token)
			resp, err := client.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			_ = resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	close(start)
	counts := map[int]int{}
	for range n {
		counts[<-statuses]++
	}
	if counts[http.StatusNoContent] != limit || counts[http.StatusConflict] != n-limit {
		t.Fatalf("statuses %v, want %d times 204 and %d times 409", counts, limit, n-limit)
	}
	added := e2etest.StoredWhere(w.EventsAfter(t, h), func(e syncdomain.StoredEvent) bool { return e.Type == "reaction.added" })
	if len(added) != limit {
		t.Fatalf("%d reaction.added events, want %d", len(added), limit)
	}
	if got := w.ReactionsOf(t, w.Alex, w.CampaignThread, w.CampaignFirstMsg); len(got) != limit {
		t.Fatalf("the message has reactions %+v, want %d", got, limit)
	}
}
