package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The catch-up and snapshot tests of issue 6 drive the wired App over real HTTP through the
// validating client (every response is checked against api/openapi.yaml and for JSON null).
// Their people are Alex (reads Support), Sam (reads Support and Marketing) and Robin (reads
// nothing), made through the API by a fourth principal, the instance's owner, so that Alex's
// reading rule holds. What the log holds is read through App.EventsAfter and the counters
// through App.Versions, never through SQL on another module's tables.

// syncCacheControl is the Cache-Control of every listEvents and getSnapshot answer (spec 03).
const syncCacheControl = "private, no-store"

// syncActor is a principal of the sync tests with its token.
type syncActor struct {
	name  string
	id    uuid.UUID
	token string
}

// syncWorld is an App with the owner (made by the bootstrap), Alex, Sam and Robin. After
// build it also has the spaces Support and Marketing, the channels tickets (Support) and
// campaigns (Marketing), a thread in each started by the owner, and the grants: Alex is a
// member of Support, Sam a member of Support and of Marketing; Robin holds no grant.
type syncWorld struct {
	env                     *wiretest.Env
	owner, alex, sam, robin syncActor

	support, marketing             uuid.UUID // spaces
	tickets, campaigns             uuid.UUID // channels
	ticketThread, campaignThread   uuid.UUID // threads started by the owner
	alexSupport, samSupport, samMk uuid.UUID // the grants of build
}

// newSyncPeople wires an App with opts and makes the owner, Alex, Sam and Robin, each with a
// token; nobody but the owner holds a grant.
func newSyncPeople(t *testing.T, opts ...wiretest.Option) *syncWorld {
	t.Helper()
	env := wiretest.New(t, opts...)
	owner, err := env.App.Bootstrap(t.Context(), "Owner", "owner", "owner@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	w := &syncWorld{env: env, owner: syncActor{name: "Owner", id: owner.PrincipalID, token: owner.Token.Reveal()}}
	w.alex = w.person(t, "Alex", "alex")
	w.sam = w.person(t, "Sam", "sam")
	w.robin = w.person(t, "Robin", "robin")
	return w
}

// newSyncWorld is newSyncPeople plus build.
func newSyncWorld(t *testing.T, opts ...wiretest.Option) *syncWorld {
	t.Helper()
	w := newSyncPeople(t, opts...)
	w.build(t)
	return w
}

// build creates, as the owner, the spaces, channels, threads and grants syncWorld describes.
func (w *syncWorld) build(t *testing.T) {
	t.Helper()
	w.support = w.space(t, "Support")
	w.marketing = w.space(t, "Marketing")
	w.tickets = w.channel(t, w.owner, w.support, "tickets")
	w.campaigns = w.channel(t, w.owner, w.marketing, "campaigns")
	w.ticketThread = w.thread(t, w.owner, w.tickets, "The printer on floor 2 is jammed").Id
	w.campaignThread = w.thread(t, w.owner, w.campaigns, "Spring launch at example.com").Id
	w.alexSupport = w.grant(t, w.alex, "space", w.support, "member")
	w.samSupport = w.grant(t, w.sam, "space", w.support, "member")
	w.samMk = w.grant(t, w.sam, "space", w.marketing, "member")
}

// person creates a person as the owner and issues a token for them.
func (w *syncWorld) person(t *testing.T, name, handle string) syncActor {
	t.Helper()
	var p apigen.Principal
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"email":"%s@example.com"}`, name, handle, handle)
	w.must(t, w.owner, http.MethodPost, "/api/v1/people", body, http.StatusCreated, &p)
	return syncActor{name: name, id: p.Id, token: w.token(t, p.Id)}
}

// agent creates an agent as the owner and issues a token for it.
func (w *syncWorld) agent(t *testing.T, name, handle string) syncActor {
	t.Helper()
	var a apigen.Agent
	body := fmt.Sprintf(`{"display_name":%q,"handle":%q,"description":"Summarises long threads."}`, name, handle)
	w.must(t, w.owner, http.MethodPost, "/api/v1/agents", body, http.StatusCreated, &a)
	return syncActor{name: name + " (agent)", id: a.Id, token: w.token(t, a.Id)}
}

// app creates an app with the scopes as the owner and issues a token for it.
func (w *syncWorld) app(t *testing.T, name, handle string, scopes ...string) syncActor {
	t.Helper()
	body, err := json.Marshal(map[string]any{"display_name": name, "handle": handle, "scopes": append([]string{}, scopes...)})
	if err != nil {
		t.Fatal(err)
	}
	var p apigen.Principal
	w.must(t, w.owner, http.MethodPost, "/api/v1/apps", string(body), http.StatusCreated, &p)
	return syncActor{name: fmt.Sprintf("%s (app %v)", name, scopes), id: p.Id, token: w.token(t, p.Id)}
}

// token issues a token for the principal as the owner and returns its secret.
func (w *syncWorld) token(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var tok apigen.CreateTokenResponse
	w.must(t, w.owner, http.MethodPost, "/api/v1/principals/"+id.String()+"/tokens", `{}`, http.StatusCreated, &tok)
	return tok.Token
}

// space creates a space as the owner.
func (w *syncWorld) space(t *testing.T, name string) uuid.UUID {
	t.Helper()
	var sp apigen.Space
	w.must(t, w.owner, http.MethodPost, "/api/v1/spaces", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &sp)
	return sp.Id
}

// channel creates a channel in the space as a.
func (w *syncWorld) channel(t *testing.T, a syncActor, space uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var ch apigen.Channel
	w.must(t, a, http.MethodPost, "/api/v1/spaces/"+space.String()+"/channels", fmt.Sprintf(`{"name":%q}`, name), http.StatusCreated, &ch)
	return ch.Id
}

// dm opens the direct message of a and the others as a.
func (w *syncWorld) dm(t *testing.T, a syncActor, others ...syncActor) uuid.UUID {
	t.Helper()
	ids := make([]string, len(others))
	for i, o := range others {
		ids[i] = strconv.Quote(o.id.String())
	}
	r := w.do(t, a, http.MethodPost, "/api/v1/dms", `{"participant_ids":[`+strings.Join(ids, ",")+`]}`)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("createDirectMessage as %s = %d; body %s", a.name, r.Status, r.Body)
	}
	var ch apigen.Channel
	r.JSON(t, &ch)
	return ch.Id
}

// thread starts a thread in the channel as a.
func (w *syncWorld) thread(t *testing.T, a syncActor, channel uuid.UUID, content string) apigen.Thread {
	t.Helper()
	var th apigen.Thread
	w.must(t, a, http.MethodPost, "/api/v1/channels/"+channel.String()+"/threads", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &th)
	return th
}

// post posts a message into the thread as a.
func (w *syncWorld) post(t *testing.T, a syncActor, thread uuid.UUID, content string) apigen.Message {
	t.Helper()
	var m apigen.Message
	w.must(t, a, http.MethodPost, "/api/v1/threads/"+thread.String()+"/messages", fmt.Sprintf(`{"content_md":%q}`, content), http.StatusCreated, &m)
	return m
}

// grant gives a the role on the resource as the owner and returns the grant's id.
func (w *syncWorld) grant(t *testing.T, a syncActor, kind string, resource uuid.UUID, role string) uuid.UUID {
	t.Helper()
	body := fmt.Sprintf(`{"principal_id":%q,"resource_kind":%q,"resource_id":%q,"role":%q}`, a.id, kind, resource, role)
	var g apigen.Grant
	w.must(t, w.owner, http.MethodPost, "/api/v1/grants", body, http.StatusCreated, &g)
	return g.Id
}

// revoke revokes the grant as the owner.
func (w *syncWorld) revoke(t *testing.T, grant uuid.UUID) {
	t.Helper()
	w.must(t, w.owner, http.MethodDelete, "/api/v1/grants/"+grant.String(), "", http.StatusNoContent, nil)
}

// readTo sets a's read state of the thread.
func (w *syncWorld) readTo(t *testing.T, a syncActor, thread uuid.UUID, seq int64) {
	t.Helper()
	w.must(t, a, http.MethodPut, "/api/v1/threads/"+thread.String()+"/read-state", fmt.Sprintf(`{"last_read_seq":%d}`, seq), http.StatusOK, nil)
}

// do sends method path as a (no Authorization header for a zero actor) with body as JSON
// ("" for none) and header pairs (name, value, ...) through the validating client.
func (w *syncWorld) do(t *testing.T, a syncActor, method, path, body string, header ...string) *wiretest.Response {
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
func (w *syncWorld) must(t *testing.T, a syncActor, method, path, body string, want int, out any, header ...string) *wiretest.Response {
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

// head is the event log's head seq (the event_seq counter).
func (w *syncWorld) head(t *testing.T) int64 {
	t.Helper()
	seq, err := w.env.App.Versions().EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return seq
}

// epoch is the instance's sync epoch.
func (w *syncWorld) epoch(t *testing.T) uuid.UUID {
	t.Helper()
	e, err := w.env.App.Versions().SyncEpoch(t.Context())
	if err != nil {
		t.Fatalf("SyncEpoch: %v", err)
	}
	return e
}

// logAfter reads every event of the log with a seq above after, as stored.
func (w *syncWorld) logAfter(t *testing.T, after int64) []syncdomain.StoredEvent {
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

// cuEvent is one envelope of a listEvents page.
type cuEvent struct {
	Seq        int64     `json:"seq"`
	ID         uuid.UUID `json:"id"`
	Type       string    `json:"type"`
	OccurredAt string    `json:"occurred_at"`
	Actor      *struct {
		ID          uuid.UUID `json:"id"`
		Kind        string    `json:"kind"`
		DisplayName string    `json:"display_name"`
		Handle      string    `json:"handle"`
	} `json:"actor"`
	SpaceID   *uuid.UUID `json:"space_id"`
	ChannelID *uuid.UUID `json:"channel_id"`
	ThreadID  *uuid.UUID `json:"thread_id"`
	Resource  struct {
		Kind string    `json:"kind"`
		ID   uuid.UUID `json:"id"`
	} `json:"resource"`
	Payload       json.RawMessage `json:"payload"`
	Redacted      bool            `json:"redacted"`
	CorrelationID string          `json:"correlation_id"`
	TraceContext  json.RawMessage `json:"trace_context"`
}

// cuPage is a listEvents page.
type cuPage struct {
	Events     []cuEvent `json:"events"`
	NextCursor int64     `json:"next_cursor"`
	HeadSeq    int64     `json:"head_seq"`
	SyncEpoch  uuid.UUID `json:"sync_epoch"`
	OldestSeq  int64     `json:"oldest_seq"`
}

// eventsPath is the listEvents path with its parameters; limit 0 and epoch "" leave them out.
func eventsPath(after int64, limit int, epoch string) string {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if epoch != "" {
		q.Set("epoch", epoch)
	}
	return "/api/v1/events?" + q.Encode()
}

// listEvents sends listEvents as a and returns the answer after checking what every answer of
// it carries: Cache-Control private, no-store.
func (w *syncWorld) listEvents(t *testing.T, a syncActor, after int64, limit int, epoch string) *wiretest.Response {
	t.Helper()
	r := w.do(t, a, http.MethodGet, eventsPath(after, limit, epoch), "")
	if r.Status != http.StatusBadRequest && r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
		if cc := r.Header.Get("Cache-Control"); cc != syncCacheControl {
			t.Fatalf("listEvents as %s -> %d has Cache-Control %q, want %q", a.name, r.Status, cc, syncCacheControl)
		}
	}
	return r
}

// page reads one page as a and checks it: 200, every member present (oldest_seq included),
// events in seq order within (after, next_cursor], next_cursor between after and head_seq, a
// page of limit events ending at its last event, and no member the envelope never carries.
func (w *syncWorld) page(t *testing.T, a syncActor, after int64, limit int) cuPage {
	t.Helper()
	r := w.listEvents(t, a, after, limit, "")
	if r.Status != http.StatusOK {
		t.Fatalf("listEvents(after %d, limit %d) as %s = %d; body %s", after, limit, a.name, r.Status, r.Body)
	}
	var members map[string]json.RawMessage
	r.JSON(t, &members)
	for _, m := range []string{"events", "next_cursor", "head_seq", "sync_epoch", "oldest_seq"} {
		if _, ok := members[m]; !ok {
			t.Fatalf("listEvents page as %s lacks %s: %s", a.name, m, r.Body)
		}
	}
	var p cuPage
	r.JSON(t, &p)
	last := after
	for _, e := range p.Events {
		if e.Seq <= last || e.Seq > p.NextCursor {
			t.Fatalf("page after %d as %s: event seq %d out of order or beyond next_cursor %d", after, a.name, e.Seq, p.NextCursor)
		}
		last = e.Seq
	}
	if p.NextCursor < after || p.NextCursor > p.HeadSeq {
		t.Fatalf("page after %d as %s: next_cursor %d outside [%d, head_seq %d]", after, a.name, p.NextCursor, after, p.HeadSeq)
	}
	if limit > 0 && len(p.Events) == limit && p.NextCursor != p.Events[len(p.Events)-1].Seq {
		t.Fatalf("a full page (limit %d) as %s ends at next_cursor %d, want its last event's seq %d", limit, a.name, p.NextCursor, p.Events[len(p.Events)-1].Seq)
	}
	if p.OldestSeq < 0 || p.OldestSeq > after {
		t.Fatalf("page after %d as %s: oldest_seq %d, want 0 to after", after, a.name, p.OldestSeq)
	}
	return p
}

// catchUp pages as a from after with the limit until next_cursor equals head_seq and returns
// every event delivered and the final cursor; it fails on a duplicate, on a cursor that goes
// back, on a change of epoch, and on more pages than the log could need.
func (w *syncWorld) catchUp(t *testing.T, a syncActor, after int64, limit int) ([]cuEvent, int64) {
	t.Helper()
	var out []cuEvent
	seen := map[uuid.UUID]bool{}
	var epoch uuid.UUID
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatalf("catch-up as %s did not reach the head after %d pages", a.name, pages)
		}
		p := w.page(t, a, after, limit)
		if epoch == uuid.Nil {
			epoch = p.SyncEpoch
		} else if p.SyncEpoch != epoch {
			t.Fatalf("sync_epoch changed while paging: %s then %s", epoch, p.SyncEpoch)
		}
		for _, e := range p.Events {
			if seen[e.ID] {
				t.Fatalf("event %s (seq %d) delivered twice to %s", e.ID, e.Seq, a.name)
			}
			seen[e.ID] = true
		}
		out = append(out, p.Events...)
		if p.NextCursor == p.HeadSeq {
			return out, p.NextCursor
		}
		if p.NextCursor == after && len(p.Events) == 0 {
			t.Fatalf("catch-up as %s is stuck at %d below head %d", a.name, after, p.HeadSeq)
		}
		after = p.NextCursor
	}
}

// cuSeqs lists the seqs of envelopes.
func cuSeqs(events []cuEvent) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// storedWhere returns the stored events keep accepts, in order.
func storedWhere(events []syncdomain.StoredEvent, keep func(syncdomain.StoredEvent) bool) []syncdomain.StoredEvent {
	var out []syncdomain.StoredEvent
	for _, e := range events {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// describeStored lists stored events by seq, type and resource for failure messages.
func describeStored(events []syncdomain.StoredEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d:%s(%s)", e.Seq, e.Type, e.ResourceID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// describeEnvelopes lists envelopes by seq and type for failure messages.
func describeEnvelopes(events []cuEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d:%s(%s)", e.Seq, e.Type, e.Resource.ID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// requireSameEvents fails unless the envelopes are exactly the stored events, in order, each
// with the stored id, type, resource and payload (byte for byte, as the log printed it).
func requireSameEvents(t *testing.T, who string, got []cuEvent, want []syncdomain.StoredEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s received %d events, want %d:\n got  %s\n want %s", who, len(got), len(want), describeEnvelopes(got), describeStored(want))
	}
	for i, g := range got {
		e := want[i]
		if g.Seq != e.Seq || g.ID != e.ID || g.Type != e.Type || g.Resource.ID != e.ResourceID || kernel.ResourceKind(g.Resource.Kind) != e.ResourceKind {
			t.Fatalf("%s: event %d is %d %s %s %s, want %d %s %s %s:\n got  %s\n want %s", who, i, g.Seq, g.ID, g.Type, g.Resource.ID,
				e.Seq, e.ID, e.Type, e.ResourceID, describeEnvelopes(got), describeStored(want))
		}
		if !bytes.Equal(g.Payload, e.Payload) {
			t.Fatalf("%s: event %d %s payload %s, want the stored %s", who, g.Seq, g.Type, g.Payload, e.Payload)
		}
		if g.Redacted != e.Redacted {
			t.Fatalf("%s: event %d %s redacted %v, want %v", who, g.Seq, g.Type, g.Redacted, e.Redacted)
		}
	}
}

// snapshot loads a's snapshot, checking its Cache-Control and ETag, and returns it with the
// answer.
func (w *syncWorld) snapshot(t *testing.T, a syncActor) (apigen.Snapshot, *wiretest.Response) {
	t.Helper()
	var s apigen.Snapshot
	r := w.must(t, a, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &s)
	if cc := r.Header.Get("Cache-Control"); cc != syncCacheControl {
		t.Fatalf("getSnapshot as %s has Cache-Control %q, want %q", a.name, cc, syncCacheControl)
	}
	if tag := r.Header.Get("ETag"); len(tag) < 3 || !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) {
		t.Fatalf("getSnapshot as %s has ETag %q, want a strong quoted tag", a.name, tag)
	}
	return s, r
}
