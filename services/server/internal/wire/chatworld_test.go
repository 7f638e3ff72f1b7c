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

// chatActor is a principal of the chat tests with its token.
type chatActor struct {
	name  string
	id    uuid.UUID
	token string
}

// chatWorld is an App with Alex (the owner, made by the bootstrap), Sam (a person) and Robin
// (a person, or an agent when the test asks), all without grants until a test gives them.
// After build it also has the spaces Support and Marketing, the channel tickets in Support and
// campaigns in Marketing, a thread in each started by Alex, and the grants: Sam is a viewer of
// Support and a member of Marketing; Robin holds no grant.
type chatWorld struct {
	env              *wiretest.Env
	alex, sam, robin chatActor

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
	w := &chatWorld{env: env, alex: chatActor{name: "Alex", id: owner.PrincipalID, token: owner.Token.Reveal()}}
	w.sam = w.person(t, "Sam", "sam")
	if robinAgent {
		var robin apigen.Agent
		w.must(t, w.alex, http.MethodPost, "/api/v1/agents", `{"display_name":"Robin","handle":"robin","description":"Summarises long threads."}`, http.StatusCreated, &robin)
		w.robin = chatActor{name: "Robin (agent)", id: robin.Id, token: w.token(t, robin.Id)}
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

// person creates a person as Alex and issues a token for them.
func (w *chatWorld) person(t *testing.T, name, handle string) chatActor {
	t.Helper()
	var p apigen.Principal
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"email":"%s@example.com"}`, name, handle, handle)
	w.must(t, w.alex, http.MethodPost, "/api/v1/people", body, http.StatusCreated, &p)
	return chatActor{name: name, id: p.Id, token: w.token(t, p.Id)}
}

// token issues a token for the principal as Alex and returns its secret.
func (w *chatWorld) token(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var tok apigen.CreateTokenResponse
	w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+id.String()+"/tokens", `{}`, http.StatusCreated, &tok)
	return tok.Token
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

// space creates a space as Alex.
func (w *chatWorld) space(t *testing.T, name string) uuid.UUID {
	t.Helper()
	var sp apigen.Space
	w.must(t, w.alex, http.MethodPost, "/api/v1/spaces", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &sp)
	return sp.Id
}

// channel creates a channel in the space as a.
func (w *chatWorld) channel(t *testing.T, a chatActor, space uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var ch apigen.Channel
	w.must(t, a, http.MethodPost, "/api/v1/spaces/"+space.String()+"/channels", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &ch)
	return ch.Id
}

// thread starts a thread in the channel as a.
func (w *chatWorld) thread(t *testing.T, a chatActor, channel uuid.UUID, content string) apigen.Thread {
	t.Helper()
	var th apigen.Thread
	w.must(t, a, http.MethodPost, "/api/v1/channels/"+channel.String()+"/threads", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &th)
	if th.FirstMessage == nil {
		t.Fatal("createThread returned no first message")
	}
	return th
}

// post posts a message into the thread as a.
func (w *chatWorld) post(t *testing.T, a chatActor, thread uuid.UUID, content string) apigen.Message {
	t.Helper()
	var m apigen.Message
	w.must(t, a, http.MethodPost, "/api/v1/threads/"+thread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &m)
	return m
}

// messages lists every message of the thread as a (one page of the default size).
func (w *chatWorld) messages(t *testing.T, a chatActor, thread uuid.UUID) []apigen.Message {
	t.Helper()
	var list apigen.MessageList
	w.must(t, a, http.MethodGet, "/api/v1/threads/"+thread.String()+"/messages", "", http.StatusOK, &list)
	return list.Items
}

// grant gives a the role on the resource as Alex.
func (w *chatWorld) grant(t *testing.T, a chatActor, kind string, resource uuid.UUID, role string) {
	t.Helper()
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":%q,"resource_id":%q,"role":%q}`, a.id, kind, resource, role)
	w.must(t, w.alex, http.MethodPost, "/api/v1/grants", body, http.StatusCreated, nil)
}

// do sends method path as a (no Authorization header for a zero actor) with body as JSON
// ("" for none) and header pairs (name, value, ...) through the validating client.
func (w *chatWorld) do(t *testing.T, a chatActor, method, path, body string, header ...string) *wiretest.Response {
	t.Helper()
	var req *http.Request
	if body == "" {
		req = w.env.Client.NewRequest(method, path, nil)
	} else {
		req = w.env.Client.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return w.env.Client.Do(req)
}

// must is do that fails the test unless the status is want, and decodes the body into out
// (unless nil).
func (w *chatWorld) must(t *testing.T, a chatActor, method, path, body string, want int, out any, header ...string) *wiretest.Response {
	t.Helper()
	r := w.do(t, a, method, path, body, header...)
	if r.Status != want {
		t.Fatalf("%s %s as %s = %d, want %d; body %s", method, path, a.name, r.Status, want, r.Body)
	}
	if out != nil {
		r.JSON(t, out)
	}
	return r
}

// head is the event log's head seq.
func (w *chatWorld) head(t *testing.T) int64 {
	t.Helper()
	seq, err := w.env.App.Versions().EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return seq
}

// eventsAfter reads every event of the log with a seq above after.
func (w *chatWorld) eventsAfter(t *testing.T, after int64) []syncdomain.StoredEvent {
	t.Helper()
	var out []syncdomain.StoredEvent
	for {
		page, err := w.env.App.EventsAfter(t.Context(), after, 500)
		if err != nil {
			t.Fatalf("EventsAfter(%d): %v", after, err)
		}
		out = append(out, page...)
		if len(page) < 500 {
			return out
		}
		after = page[len(page)-1].Seq
	}
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
	as           chatActor
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
