package e2etest

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
	"bothy.example.com/server/internal/wiretest"
)

// The catch-up and snapshot tests drive the wired App over real HTTP through the
// validating client (every response is checked against api/openapi.yaml and for JSON null).
// Their people are Alex (reads Support), Sam (reads Support and Marketing) and Robin (reads
// nothing), made through the API by a fourth principal, the instance's owner, so that Alex's
// reading rule holds. What the log holds is read through App.EventsAfter and the counters
// through App.Versions, never through SQL on another module's tables.

// SyncCacheControl is the Cache-Control of every ListEvents and getSnapshot answer (spec 03).
const SyncCacheControl = "private, no-store"

// SyncWorld is an App with the owner (made by the bootstrap), Alex, Sam and Robin. After
// build it also has the spaces Support and Marketing, the channels tickets (Support) and
// campaigns (Marketing), a thread in each started by the owner, and the grants: Alex is a
// member of Support, Sam a member of Support and of Marketing; Robin holds no grant.
type SyncWorld struct {
	World                   // the owner acts as its admin
	Owner, Alex, Sam, Robin Actor

	Support, Marketing             uuid.UUID // spaces
	Tickets, Campaigns             uuid.UUID // channels
	TicketThread, CampaignThread   uuid.UUID // threads started by the owner
	AlexSupport, SamSupport, SamMk uuid.UUID // the grants of build
}

// NewSyncPeople wires an App with opts and makes the owner, Alex, Sam and Robin, each with a
// token; nobody but the owner holds a grant.
func NewSyncPeople(t *testing.T, opts ...wiretest.Option) *SyncWorld {
	t.Helper()
	env := wiretest.New(t, opts...)
	owner, err := Bootstrap(t.Context(), env.App, "Owner", "owner", "owner@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	admin := Actor{Name: "Owner", ID: owner.PrincipalID, Token: owner.Token.Reveal()}
	w := &SyncWorld{World: World{Env: env, Admin: admin}, Owner: admin}
	w.Alex = w.Person(t, "Alex", "alex")
	w.Sam = w.Person(t, "Sam", "sam")
	w.Robin = w.Person(t, "Robin", "robin")
	return w
}

// NewSyncWorld is NewSyncPeople plus build.
func NewSyncWorld(t *testing.T, opts ...wiretest.Option) *SyncWorld {
	t.Helper()
	w := NewSyncPeople(t, opts...)
	w.build(t)
	return w
}

// build creates, as the owner, the spaces, channels, threads and grants SyncWorld describes.
func (w *SyncWorld) build(t *testing.T) {
	t.Helper()
	w.Support = w.Space(t, "Support")
	w.Marketing = w.Space(t, "Marketing")
	w.Tickets = w.Channel(t, w.Owner, w.Support, "tickets")
	w.Campaigns = w.Channel(t, w.Owner, w.Marketing, "campaigns")
	w.TicketThread = w.Thread(t, w.Owner, w.Tickets, "The printer on floor 2 is jammed").Id
	w.CampaignThread = w.Thread(t, w.Owner, w.Campaigns, "Spring launch at example.com").Id
	w.AlexSupport = w.Grant(t, w.Alex, "space", w.Support, "member")
	w.SamSupport = w.Grant(t, w.Sam, "space", w.Support, "member")
	w.SamMk = w.Grant(t, w.Sam, "space", w.Marketing, "member")
}

// DM opens the direct message of a and the others as a.
func (w *SyncWorld) DM(t *testing.T, a Actor, others ...Actor) uuid.UUID {
	t.Helper()
	ids := make([]string, len(others))
	for i, o := range others {
		ids[i] = strconv.Quote(o.ID.String())
	}
	r := w.Do(t, a, http.MethodPost, "/api/v1/dms", `{"participant_ids":[`+strings.Join(ids, ",")+`]}`)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("createDirectMessage as %s = %d; body %s", a.Name, r.Status, r.Body)
	}
	var ch apigen.Channel
	r.JSON(t, &ch)
	return ch.Id
}

// ReadTo sets a's read state of the thread.
func (w *SyncWorld) ReadTo(t *testing.T, a Actor, thread uuid.UUID, seq int64) {
	t.Helper()
	w.Must(t, a, http.MethodPut, "/api/v1/threads/"+thread.String()+"/read-state", fmt.Sprintf(`{"last_read_seq":%d}`, seq), http.StatusOK, nil)
}

// CatchUpEvent is one envelope of a ListEvents page.
type CatchUpEvent struct {
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

// CatchUpPage is a ListEvents page.
type CatchUpPage struct {
	Events     []CatchUpEvent `json:"events"`
	NextCursor int64          `json:"next_cursor"`
	HeadSeq    int64          `json:"head_seq"`
	SyncEpoch  uuid.UUID      `json:"sync_epoch"`
	OldestSeq  int64          `json:"oldest_seq"`
}

// EventsPath is the ListEvents path with its parameters; limit 0 and epoch "" leave them out.
func EventsPath(after int64, limit int, epoch string) string {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if epoch != "" {
		q.Set("epoch", epoch)
	}
	return "/api/v1/events?" + q.Encode()
}

// ListEvents sends ListEvents as a and returns the answer after checking what every answer of
// it carries: Cache-Control private, no-store.
func (w *SyncWorld) ListEvents(t *testing.T, a Actor, after int64, limit int, epoch string) *wiretest.Response {
	t.Helper()
	r := w.Do(t, a, http.MethodGet, EventsPath(after, limit, epoch), "")
	if r.Status != http.StatusBadRequest && r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
		if cc := r.Header.Get("Cache-Control"); cc != SyncCacheControl {
			t.Fatalf("listEvents as %s -> %d has Cache-Control %q, want %q", a.Name, r.Status, cc, SyncCacheControl)
		}
	}
	return r
}

// Page reads one page as a and checks it: 200, every member present (oldest_seq included),
// events in seq order within (after, next_cursor], next_cursor between after and head_seq, a
// page of limit events ending at its last event, and no member the envelope never carries.
func (w *SyncWorld) Page(t *testing.T, a Actor, after int64, limit int) CatchUpPage {
	t.Helper()
	r := w.ListEvents(t, a, after, limit, "")
	if r.Status != http.StatusOK {
		t.Fatalf("listEvents(after %d, limit %d) as %s = %d; body %s", after, limit, a.Name, r.Status, r.Body)
	}
	var members map[string]json.RawMessage
	r.JSON(t, &members)
	for _, m := range []string{"events", "next_cursor", "head_seq", "sync_epoch", "oldest_seq"} {
		if _, ok := members[m]; !ok {
			t.Fatalf("listEvents page as %s lacks %s: %s", a.Name, m, r.Body)
		}
	}
	var p CatchUpPage
	r.JSON(t, &p)
	last := after
	for _, e := range p.Events {
		if e.Seq <= last || e.Seq > p.NextCursor {
			t.Fatalf("page after %d as %s: event seq %d out of order or beyond next_cursor %d", after, a.Name, e.Seq, p.NextCursor)
		}
		last = e.Seq
	}
	if p.NextCursor < after || p.NextCursor > p.HeadSeq {
		t.Fatalf("page after %d as %s: next_cursor %d outside [%d, head_seq %d]", after, a.Name, p.NextCursor, after, p.HeadSeq)
	}
	if limit > 0 && len(p.Events) == limit && p.NextCursor != p.Events[len(p.Events)-1].Seq {
		t.Fatalf("a full page (limit %d) as %s ends at next_cursor %d, want its last event's seq %d", limit, a.Name, p.NextCursor, p.Events[len(p.Events)-1].Seq)
	}
	if p.OldestSeq < 0 || p.OldestSeq > after {
		t.Fatalf("page after %d as %s: oldest_seq %d, want 0 to after", after, a.Name, p.OldestSeq)
	}
	return p
}

// CatchUp pages as a from after with the limit until next_cursor equals head_seq and returns
// every event delivered and the final cursor; it fails on a duplicate, on a cursor that goes
// back, on a change of epoch, and on more pages than the log could need.
func (w *SyncWorld) CatchUp(t *testing.T, a Actor, after int64, limit int) ([]CatchUpEvent, int64) {
	t.Helper()
	var out []CatchUpEvent
	seen := map[uuid.UUID]bool{}
	var epoch uuid.UUID
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatalf("catch-up as %s did not reach the head after %d pages", a.Name, pages)
		}
		p := w.Page(t, a, after, limit)
		if epoch == uuid.Nil {
			epoch = p.SyncEpoch
		} else if p.SyncEpoch != epoch {
			t.Fatalf("sync_epoch changed while paging: %s then %s", epoch, p.SyncEpoch)
		}
		for _, e := range p.Events {
			if seen[e.ID] {
				t.Fatalf("event %s (seq %d) delivered twice to %s", e.ID, e.Seq, a.Name)
			}
			seen[e.ID] = true
		}
		out = append(out, p.Events...)
		if p.NextCursor == p.HeadSeq {
			return out, p.NextCursor
		}
		if p.NextCursor == after && len(p.Events) == 0 {
			t.Fatalf("catch-up as %s is stuck at %d below head %d", a.Name, after, p.HeadSeq)
		}
		after = p.NextCursor
	}
}

// CatchUpSeqs lists the seqs of envelopes.
func CatchUpSeqs(events []CatchUpEvent) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// StoredSeqs lists the seqs of stored events.
func StoredSeqs(events []syncdomain.StoredEvent) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// SharedAfter is EventsAfter without the personal events, each of which reaches its owner
// only: what a reader of everything receives who wrote none of them. Every post appends its
// author's own read state too (spec 05a, own posts are read), so the owner's posts leave one
// personal event each in the log.
func (w *World) SharedAfter(t *testing.T, after int64) []syncdomain.StoredEvent {
	t.Helper()
	return StoredWhere(w.EventsAfter(t, after), func(e syncdomain.StoredEvent) bool { return !e.Personal() })
}

// StoredWhere returns the stored events keep accepts, in order.
func StoredWhere(events []syncdomain.StoredEvent, keep func(syncdomain.StoredEvent) bool) []syncdomain.StoredEvent {
	var out []syncdomain.StoredEvent
	for _, e := range events {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// DescribeEnvelopes lists envelopes by seq and type for failure messages.
func DescribeEnvelopes(events []CatchUpEvent) string {
	parts := make([]string, len(events))
	for i, e := range events {
		parts[i] = fmt.Sprintf("%d:%s(%s)", e.Seq, e.Type, e.Resource.ID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// RequireSameEvents fails unless the envelopes are exactly the stored events, in order, each
// with the stored id, type, resource and payload (byte for byte, as the log printed it).
func RequireSameEvents(t *testing.T, who string, got []CatchUpEvent, want []syncdomain.StoredEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s received %d events, want %d:\n got  %s\n want %s", who, len(got), len(want), DescribeEnvelopes(got), Describe(want))
	}
	for i, g := range got {
		e := want[i]
		if g.Seq != e.Seq || g.ID != e.ID || g.Type != e.Type || g.Resource.ID != e.ResourceID || kernel.ResourceKind(g.Resource.Kind) != e.ResourceKind {
			t.Fatalf("%s: event %d is %d %s %s %s, want %d %s %s %s:\n got  %s\n want %s", who, i, g.Seq, g.ID, g.Type, g.Resource.ID,
				e.Seq, e.ID, e.Type, e.ResourceID, DescribeEnvelopes(got), Describe(want))
		}
		if !bytes.Equal(g.Payload, e.Payload) {
			t.Fatalf("%s: event %d %s payload %s, want the stored %s", who, g.Seq, g.Type, g.Payload, e.Payload)
		}
		if g.Redacted != e.Redacted {
			t.Fatalf("%s: event %d %s redacted %v, want %v", who, g.Seq, g.Type, g.Redacted, e.Redacted)
		}
	}
}

// Snapshot loads a's snapshot, checking its Cache-Control and ETag, and returns it with the
// answer.
func (w *SyncWorld) Snapshot(t *testing.T, a Actor) (apigen.Snapshot, *wiretest.Response) {
	t.Helper()
	var s apigen.Snapshot
	r := w.Must(t, a, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &s)
	if cc := r.Header.Get("Cache-Control"); cc != SyncCacheControl {
		t.Fatalf("getSnapshot as %s has Cache-Control %q, want %q", a.Name, cc, SyncCacheControl)
	}
	if tag := r.Header.Get("ETag"); len(tag) < 3 || !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) {
		t.Fatalf("getSnapshot as %s has ETag %q, want a strong quoted tag", a.Name, tag)
	}
	return s, r
}
