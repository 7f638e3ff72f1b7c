package e2etest

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
	"bothy.example.com/server/internal/wiretest"
)

// The integration tests of the chat module and of personal data (spec 05a) drive the wired App
// over real HTTP through the validating client (every response is checked against
// api/openapi.yaml and for JSON null) and read what each operation appended through
// App.EventsAfter, never through SQL on another module's tables.

// ChatWorld is an App with Alex (the owner, made by the bootstrap), Sam (a person) and Robin
// (a person, or an agent when the test asks), all without grants until a test gives them.
// After build it also has the spaces Support and Marketing, the channel tickets in Support and
// campaigns in Marketing, a thread in each started by Alex, and the grants: Sam is a viewer of
// Support and a member of Marketing; Robin holds no grant.
type ChatWorld struct {
	World            // Alex acts as its admin
	Alex, Sam, Robin Actor

	Support, Marketing               uuid.UUID // spaces
	Tickets, Campaigns               uuid.UUID // channels
	TicketThread, CampaignThread     uuid.UUID // threads started by Alex
	TicketFirstMsg, CampaignFirstMsg uuid.UUID // their first messages
	TicketContent, CampaignContent   string
}

// NewPeople wires an App with opts and makes Alex, Sam and Robin (an agent when robinAgent)
// with a token each; nobody but Alex holds a grant.
func NewPeople(t *testing.T, robinAgent bool, opts ...wiretest.Option) *ChatWorld {
	t.Helper()
	env := wiretest.New(t, opts...)
	owner, err := Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	alex := Actor{Name: "Alex", ID: owner.PrincipalID, Token: owner.Token.Reveal()}
	w := &ChatWorld{World: World{Env: env, Admin: alex}, Alex: alex}
	w.Sam = w.Person(t, "Sam", "sam")
	if robinAgent {
		w.Robin = w.Agent(t, "Robin", "robin")
	} else {
		w.Robin = w.Person(t, "Robin", "robin")
	}
	return w
}

// NewChatWorld is NewPeople plus build.
func NewChatWorld(t *testing.T, robinAgent bool, opts ...wiretest.Option) *ChatWorld {
	t.Helper()
	w := NewPeople(t, robinAgent, opts...)
	w.build(t)
	return w
}

// build creates, as Alex, the spaces, channels, threads and grants the ChatWorld describes.
func (w *ChatWorld) build(t *testing.T) {
	t.Helper()
	w.Support = w.Space(t, "Support")
	w.Marketing = w.Space(t, "Marketing")
	w.Tickets = w.Channel(t, w.Alex, w.Support, "tickets")
	w.Campaigns = w.Channel(t, w.Alex, w.Marketing, "campaigns")
	w.TicketContent = "The printer on floor 2 is jammed"
	w.CampaignContent = "Spring launch at example.com"
	th := w.Thread(t, w.Alex, w.Tickets, w.TicketContent)
	w.TicketThread, w.TicketFirstMsg = th.Id, th.FirstMessage.Id
	th = w.Thread(t, w.Alex, w.Campaigns, w.CampaignContent)
	w.CampaignThread, w.CampaignFirstMsg = th.Id, th.FirstMessage.Id
	w.Grant(t, w.Sam, "space", w.Support, "viewer")
	w.Grant(t, w.Sam, "space", w.Marketing, "member")
}

// Messages lists every message of the thread as a (one page of the default size).
func (w *ChatWorld) Messages(t *testing.T, a Actor, thread uuid.UUID) []apigen.Message {
	t.Helper()
	var list apigen.MessageList
	w.Must(t, a, http.MethodGet, "/api/v1/threads/"+thread.String()+"/messages", "", http.StatusOK, &list)
	return list.Items
}

// WantEvent is an event an operation must append, placed and addressed exactly.
type WantEvent struct {
	Typ  string
	Kind kernel.ResourceKind
	// ID is the resource's id; uuid.Nil accepts any id but the nil UUID (a new grant's).
	ID                     uuid.UUID
	Space, Channel, Thread uuid.UUID
	Actor                  uuid.UUID
	// Audience is the one receiver of a personal event; uuid.Nil for every other event.
	Audience uuid.UUID
}

func (e WantEvent) String() string {
	return fmt.Sprintf("%s on %s %s (space %s, channel %s, thread %s) by %s for %s",
		e.Typ, e.Kind, e.ID, e.Space, e.Channel, e.Thread, e.Actor, e.Audience)
}

// ExpectEvents fails the test unless the events after the seq after are exactly want, in
// order, each caused by the request of r (correlation id = its X-Request-Id). It returns the
// events for checks of their payloads.
func (w *ChatWorld) ExpectEvents(t *testing.T, after int64, r *wiretest.Response, want ...WantEvent) []syncdomain.StoredEvent {
	t.Helper()
	got := w.EventsAfter(t, after)
	if len(got) != len(want) {
		t.Fatalf("%d events appended, want %d:\n got  %s\n want %v", len(got), len(want), Describe(got), want)
	}
	reqID := r.Header.Get(correlation.Header)
	for i, wi := range want {
		e := got[i]
		g := WantEvent{
			Typ: e.Type, Kind: e.ResourceKind, ID: e.ResourceID, Space: e.SpaceID, Channel: e.ChannelID,
			Thread: e.ThreadID, Actor: e.ActorID, Audience: e.AudienceID,
		}
		if wi.ID == uuid.Nil && g.ID != uuid.Nil {
			g.ID = uuid.Nil
		}
		if g != wi {
			t.Fatalf("event %d (seq %d):\n got  %v\n want %v", i, e.Seq, g, wi)
		}
		if e.Personal() != (wi.Audience != uuid.Nil) || (e.ReceiveAction == "") != e.Personal() {
			t.Fatalf("event %d %s: personal %v with receive action %q", i, e.Type, e.Personal(), e.ReceiveAction)
		}
		if e.CorrelationID != reqID {
			t.Fatalf("event %d %s has correlation id %q, want the request's %q", i, e.Type, e.CorrelationID, reqID)
		}
	}
	return got
}

// ExpectNone fails the test unless nothing was appended after the seq after.
func (w *ChatWorld) ExpectNone(t *testing.T, after int64, what string) {
	t.Helper()
	if got := w.EventsAfter(t, after); len(got) != 0 {
		t.Fatalf("%s appended %d events, want none: %s", what, len(got), Describe(got))
	}
}

// Describe lists events by type and resource for failure messages.
func Describe(events []syncdomain.StoredEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d:%s(%s %s)", e.Seq, e.Type, e.ResourceKind, e.ResourceID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// PayloadOf decodes an event's payload.
func PayloadOf(t *testing.T, e syncdomain.StoredEvent) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("payload of %s: %v: %s", e.Type, err, e.Payload)
	}
	return m
}

// RequirePayload fails the test unless the payload has exactly the members of want (values
// compared in their JSON form: strings, json.Number, []any of strings and so on).
func RequirePayload(t *testing.T, e syncdomain.StoredEvent, want map[string]any) {
	t.Helper()
	got := PayloadOf(t, e)
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

// IDStrings renders ids as the JSON strings a payload holds, in the given order.
func IDStrings(list ...uuid.UUID) []any {
	out := make([]any, len(list))
	for i, id := range list {
		out[i] = id.String()
	}
	return out
}

// SortedIDs returns the ids in byte order, the order of a direct message's participants.
func SortedIDs(list ...uuid.UUID) []uuid.UUID {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// Refusal is a request that must be refused with status and code, naming fields when the
// code is validation_failed, and append nothing.
type Refusal struct {
	Name         string
	As           Actor
	Method, Path string
	Body         string
	Header       []string // name, value, ...
	Status       int
	Code         string
	Fields       []string // the fields a validation_failed names, in any order
}

// Statuses and codes of the refusals.
const (
	Invalid   = "validation_failed"
	Forbidden = "forbidden"
	NotFound  = "not_found"
	Conflict  = "conflict"
)

// Refuse sends each refusal in turn and fails the test unless it is refused as described
// and the log's head did not move.
func (w *ChatWorld) Refuse(t *testing.T, cases ...Refusal) {
	t.Helper()
	for _, c := range cases {
		h := w.Head(t)
		r := w.Do(t, c.As, c.Method, c.Path, c.Body, c.Header...)
		if r.Status != c.Status {
			t.Fatalf("%s: %s %s as %s = %d, want %d; body %s", c.Name, c.Method, c.Path, c.As.Name, r.Status, c.Status, r.Body)
		}
		p := r.RequireProblem(t, c.Status, c.Code)
		if c.Code == Invalid {
			var got []string
			for _, f := range p.Errors {
				got = append(got, f.Field)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.Fields))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: the problem names %v, want %v; body %s", c.Name, got, want, r.Body)
			}
		}
		w.ExpectNone(t, h, c.Name)
	}
}
