package wire_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The integration tests of reactions (issue 13, ADR 0025) drive addReaction and removeReaction
// over real HTTP, read the counts through listMessages and the events through the log,
// catch-up and the gateway.

const thumbsUp = "\U0001F44D"

// reactionPath is the path of a reaction to a message, the reaction percent-encoded as one
// path segment like a client does.
func reactionPath(message uuid.UUID, reaction string) string {
	return "/api/v1/messages/" + message.String() + "/reactions/" + url.PathEscape(reaction)
}

// react adds (PUT) or removes (DELETE) a's reaction and requires 204.
func (w *chatWorld) react(t *testing.T, a worldActor, method string, message uuid.UUID, reaction string) *wiretest.Response {
	t.Helper()
	return w.must(t, a, method, reactionPath(message, reaction), "", http.StatusNoContent, nil)
}

// reactionsOf returns the reactions of the message as a reads them through listMessages.
func (w *chatWorld) reactionsOf(t *testing.T, a worldActor, thread, message uuid.UUID) []apigen.ReactionCount {
	t.Helper()
	for _, m := range w.messages(t, a, thread) {
		if m.Id == message {
			return m.Reactions
		}
	}
	t.Fatalf("%s does not list message %s in thread %s", a.name, message, thread)
	return nil
}

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
	w := newChatWorld(t, false)
	msg, thread := w.campaignFirstMsg, w.campaignThread
	ev := func(a worldActor, typ string) wantEvent {
		return wantEvent{typ: typ, kind: kernel.ResourceMessage, id: msg, space: w.marketing, channel: w.campaigns, thread: thread, actor: a.id}
	}
	payload := func(a worldActor, reaction string) map[string]any {
		return map[string]any{
			"message_id": msg.String(), "thread_id": thread.String(), "channel_id": w.campaigns.String(),
			"principal_id": a.id.String(), "reaction": reaction,
		}
	}
	requireReactions(t, "Sam before any reaction", w.reactionsOf(t, w.sam, thread, msg))

	h := w.head(t)
	r := w.react(t, w.sam, http.MethodPut, msg, ":thumbs_up:")
	got := w.expectEvents(t, h, r, ev(w.sam, "reaction.added"))
	requirePayload(t, got[0], payload(w.sam, ":thumbs_up:"))

	// Again: the same state, no second event.
	h = w.head(t)
	w.react(t, w.sam, http.MethodPut, msg, ":thumbs_up:")
	w.expectNone(t, h, "adding a reaction twice")

	// Alex makes the same shortcode, the emoji (percent-encoded in the path) and :+1: (a plus
	// sign in a path is a plus sign).
	for _, reaction := range []string{":thumbs_up:", thumbsUp, ":+1:"} {
		h = w.head(t)
		r = w.react(t, w.alex, http.MethodPut, msg, reaction)
		got = w.expectEvents(t, h, r, ev(w.alex, "reaction.added"))
		requirePayload(t, got[0], payload(w.alex, reaction))
	}
	h = w.head(t)
	w.must(t, w.alex, http.MethodPut, "/api/v1/messages/"+msg.String()+"/reactions/:+1:", "", http.StatusNoContent, nil)
	w.expectNone(t, h, "adding :+1: again with the plus sign unencoded")

	requireReactions(t, "Sam", w.reactionsOf(t, w.sam, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 2, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: false},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: false})
	requireReactions(t, "Alex", w.reactionsOf(t, w.alex, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 2, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: true},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: true})

	// Sam takes his back: one event; again, or a reaction he never made: none.
	h = w.head(t)
	r = w.react(t, w.sam, http.MethodDelete, msg, ":thumbs_up:")
	got = w.expectEvents(t, h, r, ev(w.sam, "reaction.removed"))
	requirePayload(t, got[0], payload(w.sam, ":thumbs_up:"))
	h = w.head(t)
	w.react(t, w.sam, http.MethodDelete, msg, ":thumbs_up:")
	w.react(t, w.sam, http.MethodDelete, msg, thumbsUp)
	w.react(t, w.sam, http.MethodDelete, msg, ":never_made:")
	w.expectNone(t, h, "removing reactions one has not made")
	requireReactions(t, "Sam after taking his back", w.reactionsOf(t, w.sam, thread, msg),
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 1, Me: false},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: false},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: false})

	// editMessage answers the message with its reactions, counted for the editor.
	var edited apigen.Message
	w.must(t, w.alex, http.MethodPatch, "/api/v1/messages/"+msg.String(), `{"content_md":"Spring launch moved"}`, http.StatusOK, &edited)
	requireReactions(t, "Alex's edit", edited.Reactions,
		apigen.ReactionCount{Reaction: ":thumbs_up:", Count: 1, Me: true},
		apigen.ReactionCount{Reaction: thumbsUp, Count: 1, Me: true},
		apigen.ReactionCount{Reaction: ":+1:", Count: 1, Me: true})
	// A new message has none.
	posted := w.post(t, w.sam, thread, "No reactions yet")
	requireReactions(t, "a new message", posted.Reactions)
}

// TestReactionRefusals: a bad reaction is 400 naming reaction; a viewer may read but not
// react (403); who cannot read the message gets the 404 of a message that does not exist;
// a deleted message and an archived channel are 409; the distinct limit is 409. None appends
// anything.
func TestReactionRefusals(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false, wiretest.WithSetting(chatapp.KeyMaxReactionsPerMessage, "2"))
	msg := w.campaignFirstMsg
	random := uuid.New()
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		h := w.head(t)
		for _, bad := range []string{"thumbs up", "::", ":Thumbs_Up:", thumbsUp + thumbsUp, thumbsUp + " ", "\U0001F1F3", strings.Repeat("a", 65)} {
			p := w.do(t, w.sam, method, reactionPath(msg, bad), "").RequireProblem(t, http.StatusBadRequest, invalid)
			if len(p.Errors) != 1 || p.Errors[0].Field != "reaction" {
				t.Fatalf("%s %q: errors %+v, want one naming reaction", method, bad, p.Errors)
			}
		}
		// Sam only views Support.
		w.do(t, w.sam, method, reactionPath(w.ticketFirstMsg, ":ok:"), "").RequireProblem(t, http.StatusForbidden, forbidden)
		// Robin reads nothing: Support's message is a random one to him, also with a bad
		// reaction.
		for _, reaction := range []string{":ok:", "bad"} {
			seen := w.do(t, w.robin, method, reactionPath(w.ticketFirstMsg, reaction), "")
			missing := w.do(t, w.robin, method, reactionPath(random, reaction), "")
			seen.RequireProblem(t, http.StatusNotFound, notFound)
			missing.RequireProblem(t, http.StatusNotFound, notFound)
			if a, b := problemBody(t, seen), problemBody(t, missing); a != b {
				t.Fatalf("%s %q as Robin: Support's message answers\n%s\nbut a random id\n%s", method, reaction, a, b)
			}
		}
		w.expectNone(t, h, method+" refusals")
	}

	// The distinct limit (2 here): a third distinct reaction is refused, an existing one is
	// still taken.
	w.react(t, w.alex, http.MethodPut, msg, ":one:")
	w.react(t, w.alex, http.MethodPut, msg, ":two:")
	h := w.head(t)
	w.do(t, w.sam, http.MethodPut, reactionPath(msg, ":three:"), "").RequireProblem(t, http.StatusConflict, conflict)
	w.expectNone(t, h, "a reaction beyond chat.max_reactions_per_message")
	w.react(t, w.sam, http.MethodPut, msg, ":two:")

	// A deleted message has no reactions: adding is 409, removing changes nothing.
	w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+msg.String(), "", http.StatusNoContent, nil)
	requireReactions(t, "Sam on the deleted message", w.reactionsOf(t, w.sam, w.campaignThread, msg))
	h = w.head(t)
	w.do(t, w.sam, http.MethodPut, reactionPath(msg, ":two:"), "").RequireProblem(t, http.StatusConflict, conflict)
	w.react(t, w.sam, http.MethodDelete, msg, ":two:")
	w.expectNone(t, h, "reactions on a deleted message")

	// An archived channel takes no reaction changes.
	second := w.post(t, w.alex, w.campaignThread, "Still here")
	w.react(t, w.sam, http.MethodPut, second.Id, ":ok:")
	w.must(t, w.alex, http.MethodPost, "/api/v1/channels/"+w.campaigns.String()+"/archive", "", http.StatusOK, nil)
	h = w.head(t)
	w.do(t, w.sam, http.MethodPut, reactionPath(second.Id, ":wave:"), "").RequireProblem(t, http.StatusConflict, conflict)
	w.do(t, w.sam, http.MethodDelete, reactionPath(second.Id, ":ok:"), "").RequireProblem(t, http.StatusConflict, conflict)
	w.expectNone(t, h, "reactions in an archived channel")
}

// TestDeletingAMessageRedactsItsReactionEvents: reaction events are the message's events, so
// its deletion reduces them to their ids in the log like message.created.
func TestDeletingAMessageRedactsItsReactionEvents(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	msg := w.campaignFirstMsg
	h := w.head(t)
	w.react(t, w.sam, http.MethodPut, msg, ":thumbs_up:")
	w.react(t, w.sam, http.MethodDelete, msg, ":thumbs_up:")
	w.must(t, w.alex, http.MethodDelete, "/api/v1/messages/"+msg.String(), "", http.StatusNoContent, nil)
	events := w.eventsAfter(t, h)
	if len(events) != 3 {
		t.Fatalf("events %s, want the two reaction events and message.deleted", describe(events))
	}
	for _, e := range events[:2] {
		if !e.Redacted {
			t.Fatalf("%s of the deleted message is not redacted", e.Type)
		}
		requirePayload(t, e, map[string]any{
			"message_id": msg.String(), "thread_id": w.campaignThread.String(), "channel_id": w.campaigns.String(),
			"principal_id": w.sam.id.String(),
		})
	}
}

// TestReactionEventsReachReadersOnly: Sam reads both channels and gets both reactions, through
// catch-up and live on the gateway; Robin, a viewer of Support only, gets the one on Support's
// message and never the one on Marketing's, through either.
func TestReactionEventsReachReadersOnly(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	w.grant(t, w.robin, "space", w.support, "viewer")
	h := w.head(t)
	sam := mustDial(t, w.env.Server.URL, w.sam.token)
	sam.send(fmt.Sprintf(`{"op":"resume","after":%d}`, h))
	robin := mustDial(t, w.env.Server.URL, w.robin.token)
	robin.send(fmt.Sprintf(`{"op":"resume","after":%d}`, h))

	w.react(t, w.sam, http.MethodPut, w.campaignFirstMsg, ":thumbs_up:")
	w.react(t, w.alex, http.MethodPut, w.ticketFirstMsg, thumbsUp)
	w.react(t, w.sam, http.MethodDelete, w.campaignFirstMsg, ":thumbs_up:")
	w.react(t, w.alex, http.MethodDelete, w.ticketFirstMsg, thumbsUp)
	final := w.head(t)
	stored := w.eventsAfter(t, h)
	if len(stored) != 4 {
		t.Fatalf("events %s, want four reaction events", describe(stored))
	}
	onTickets := storedWhere(stored, func(e syncdomain.StoredEvent) bool { return e.ChannelID == w.tickets })

	for _, c := range []struct {
		who  worldActor
		conn *gwClient
		want []syncdomain.StoredEvent
	}{
		{w.sam, sam, stored},
		{w.robin, robin, onTickets},
	} {
		wantSeqs := storedSeqs(c.want)
		if got := w.restEvents(t, c.who, h, final); !slices.Equal(got, wantSeqs) {
			t.Errorf("listEvents gives %s %v, want %v (%s)", c.who.name, got, wantSeqs, describe(c.want))
		}
		// The last event (on tickets) is one each may read, so the connection reaches it.
		live, _ := c.conn.until(final, false)
		if got := gwSeqs(live); !slices.Equal(got, wantSeqs) {
			t.Errorf("the gateway gives %s %v, want %v", c.who.name, got, wantSeqs)
		}
		for i, e := range live {
			if i < len(c.want) && e.Type != c.want[i].Type {
				t.Errorf("the gateway's event %d for %s is %s, want %s", e.Seq, c.who.name, e.Type, c.want[i].Type)
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
	w := newChatWorld(t, false, wiretest.WithSetting(chatapp.KeyMaxReactionsPerMessage, fmt.Sprint(limit)))
	reactors := make([]worldActor, n)
	for i := range reactors {
		reactors[i] = w.person(t, fmt.Sprintf("Reactor %d", i), fmt.Sprintf("reactor%d", i))
		w.grant(t, reactors[i], "channel", w.campaigns, "member")
	}
	h := w.head(t)
	statuses := make(chan int, n)
	client := w.env.Server.Client()
	start := make(chan struct{})
	for i, a := range reactors {
		go func() {
			<-start
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPut,
				w.env.Server.URL+reactionPath(w.campaignFirstMsg, fmt.Sprintf(":r%d:", i)), nil)
			if err != nil {
				statuses <- 0
				return
			}
			req.Header.Set("Authorization", "Bearer "+a.token)
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
	added := storedWhere(w.eventsAfter(t, h), func(e syncdomain.StoredEvent) bool { return e.Type == "reaction.added" })
	if len(added) != limit {
		t.Fatalf("%d reaction.added events, want %d", len(added), limit)
	}
	if got := w.reactionsOf(t, w.alex, w.campaignThread, w.campaignFirstMsg); len(got) != limit {
		t.Fatalf("the message has reactions %+v, want %d", got, limit)
	}
}
