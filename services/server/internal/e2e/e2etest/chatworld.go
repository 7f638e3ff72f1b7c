package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/correlation"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The integration tests of the chat module and of personal data (issue 5) drive the wired App
// over real HTTP through the validating client (every response is checked against
// api/openapi.yaml and for JSON null) and read what each operation appended through
// App.EventsAfter, never through SQL on another module's tables.

// chatWorld is an App with Alex (the owner, made by the bootstrap), Sam (a person) and Robin
// (a person, or an agent when the test asks), all without grants until a test gives them.
// After build it also has the spaces Support and Marketing, the channel tickets in Support and
// campaigns in Marketing, a thread in each started by Alex, and the grants: Sam is a viewer of
// Support and a member of Marketing; Robin holds no grant.
type chatWorld struct {
	apiWorld         // Alex acts as its admin
	alex, sam, robin worldActor

	support, marketing               uuid.UUID // spaces
	tickets, campaigns               uuid.UUID // channels
	ticketThread, campaignThread     uuid.UUID // threads started by Alex
	ticketFirstMsg, campaignFirstMsg uuid.UUID // their first messages
	ticketContent, campaignContent   string
}

// newPeople wires an App with opts and makes Alex, Sam and Robin (an agent when robinAgent)
// with a token each; nobody but Alex holds a grant.
func newPeople(t *testing.T, robinAgent bool, opts ...wiretest.Option) *chatWorld {
	t.Helper()
	env := wiretest.New(t, opts...)
	owner, err := env.App.Bootstrap(t.Context(), "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	alex := worldActor{name: "Alex", id: owner.PrincipalID, token: owner.Token.Reveal()}
	w := &chatWorld{apiWorld: apiWorld{env: env, admin: alex}, alex: alex}
	w.sam = w.person(t, "Sam", "sam")
	if robinAgent {
		w.robin = w.agent(t, "Robin", "robin")
	} else {
		w.robin = w.person(t, "Robin", "robin")
	}
	return w
}

// newChatWorld is newPeople plus build.
func newChatWorld(t *testing.T, robinAgent bool, opts ...wiretest.Option) *chatWorld {
	t.Helper()
	w := newPeople(t, robinAgent, opts...)
	w.build(t)
	return w
}

// build creates, as Alex, the spaces, channels, threads and grants the chatWorld describes.
func (w *chatWorld) build(t *testing.T) {
	t.Helper()
	w.support = w.space(t, "Support")
	w.marketing = w.space(t, "Marketing")
	w.tickets = w.channel(t, w.alex, w.support, "tickets")
	w.campaigns = w.channel(t, w.alex, w.marketing, "campaigns")
	w.ticketContent = "The printer on floor 2 is jammed"
	w.campaignContent = "Spring launch at example.com"
	th := w.thread(t, w.alex, w.tickets, w.ticketContent)
	w.ticketThread, w.ticketFirstMsg = th.Id, th.FirstMessage.Id
	th = w.thread(t, w.alex, w.campaigns, w.campaignContent)
	w.campaignThread, w.campaignFirstMsg = th.Id, th.FirstMessage.Id
	w.grant(t, w.sam, "space", w.support, "viewer")
	w.grant(t, w.sam, "space", w.marketing, "member")
}

// messages lists every message of the thread as a (one page of the default size).
func (w *chatWorld) messages(t *testing.T, a worldActor, thread uuid.UUID) []apigen.Message {
	t.Helper()
	var list apigen.MessageList
	w.must(t, a, http.MethodGet, "/api/v1/threads/"+thread.String()+"/messages", "", http.StatusOK, &list)
	return list.Items
}

// wantEvent is an event an operation must append, placed and addressed exactly.
type wantEvent struct {
	typ  string
	kind kernel.ResourceKind
	// id is the resource's id; uuid.Nil accepts any id but the nil UUID (a new grant's).
	id                     uuid.UUID
	space, channel, thread uuid.UUID
	actor                  uuid.UUID
	// audience is the one receiver of a personal event; uuid.Nil for every other event.
	audience uuid.UUID
}

func (e wantEvent) String() string {
	return fmt.Sprintf("%s on %s %s (space %s, channel %s, thread %s) by %s for %s",
		e.typ, e.kind, e.id, e.space, e.channel, e.thread, e.actor, e.audience)
}

// expectEvents fails the test unless the events after the seq after are exactly want, in
// order, each caused by the request of r (correlation id = its X-Request-Id). It returns the
// events for checks of their payloads.
func (w *chatWorld) expectEvents(t *testing.T, after int64, r *wiretest.Response, want ...wantEvent) []syncdomain.StoredEvent {
	t.Helper()
	got := w.eventsAfter(t, after)
	if len(got) != len(want) {
		t.Fatalf("%d events appended, want %d:\n got  %s\n want %v", len(got), len(want), describe(got), want)
	}
	reqID := r.Header.Get(correlation.Header)
	for i, wi := range want {
		e := got[i]
		g := wantEvent{
			typ: e.Type, kind: e.ResourceKind, id: e.ResourceID, space: e.SpaceID, channel: e.ChannelID,
			thread: e.ThreadID, actor: e.ActorID, audience: e.AudienceID,
		}
		if wi.id == uuid.Nil && g.id != uuid.Nil {
			g.id = uuid.Nil
		}
		if g != wi {
			t.Fatalf("event %d (seq %d):\n got  %v\n want %v", i, e.Seq, g, wi)
		}
		if e.Personal() != (wi.audience != uuid.Nil) || (e.ReceiveAction == "") != e.Personal() {
			t.Fatalf("event %d %s: personal %v with receive action %q", i, e.Type, e.Personal(), e.ReceiveAction)
		}
		if e.CorrelationID != reqID {
			t.Fatalf("event %d %s has correlation id %q, want the request's %q", i, e.Type, e.CorrelationID, reqID)
		}
	}
	return got
}

// expectNone fails the test unless nothing was appended after the seq after.
func (w *chatWorld) expectNone(t *testing.T, after int64, what string) {
	t.Helper()
	if got := w.eventsAfter(t, after); len(got) != 0 {
		t.Fatalf("%s appended %d events, want none: %s", what, len(got), describe(got))
	}
}

// describe lists events by type and resource for failure messages.
func describe(events []syncdomain.StoredEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d:%s(%s %s)", e.Seq, e.Type, e.ResourceKind, e.ResourceID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// payloadOf decodes an event's payload.
func payloadOf(t *testing.T, e syncdomain.StoredEvent) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("payload of %s: %v: %s", e.Type, err, e.Payload)
	}
	return m
}

// requirePayload fails the test unless the payload has exactly the members of want (values
// compared in their JSON form: strings, json.Number, []any of strings and so on).
func requirePayload(t *testing.T, e syncdomain.StoredEvent, want map[string]any) {
	t.Helper()
	got := payloadOf(t, e)
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("%s payload\n got  %s\n want %s", e.Type, gotJSON, wantJSON)
	}
}

// idStrings renders ids as the JSON strings a payload holds, in the given order.
func idStrings(list ...uuid.UUID) []any {
	out := make([]any, len(list))
	for i, id := range list {
		out[i] = id.String()
	}
	return out
}

// sortedIDs returns the ids in byte order, the order of a direct message's participants.
func sortedIDs(list ...uuid.UUID) []uuid.UUID {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// refusal is a request that must be refused with status and code, naming fields when the
// code is validation_failed, and append nothing.
type refusal struct {
	name         string
	as           worldActor
	method, path string
	body         string
	header       []string // name, value, ...
	status       int
	code         string
	fields       []string // the fields a validation_failed names, in any order
}

// Statuses and codes of the refusals.
const (
	invalid   = "validation_failed"
	forbidden = "forbidden"
	notFound  = "not_found"
	conflict  = "conflict"
)

// refuse sends each refusal in turn and fails the test unless it is refused as described
// and the log's head did not move.
func (w *chatWorld) refuse(t *testing.T, cases ...refusal) {
	t.Helper()
	for _, c := range cases {
		h := w.head(t)
		r := w.do(t, c.as, c.method, c.path, c.body, c.header...)
		if r.Status != c.status {
			t.Fatalf("%s: %s %s as %s = %d, want %d; body %s", c.name, c.method, c.path, c.as.name, r.Status, c.status, r.Body)
		}
		p := r.RequireProblem(t, c.status, c.code)
		if c.code == invalid {
			var got []string
			for _, f := range p.Errors {
				got = append(got, f.Field)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.fields))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: the problem names %v, want %v; body %s", c.name, got, want, r.Body)
			}
		}
		w.expectNone(t, h, c.name)
	}
}
