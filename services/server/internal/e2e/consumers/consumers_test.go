package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The durable consumer tests (issue 15, spec 03 "Durable consumers") drive the wired App over
// real HTTP and real WebSockets. Robin is an agent with a viewer grant on Support (the
// channel tickets); Alex posts; Sam is a person.

// consumerWorld is a chatWorld whose Robin is an agent reading Support, with the tail running
// for the gateway; robinSupport is Robin's grant.
type consumerWorld struct {
	*chatWorld
	robinSupport apigen.Grant
}

func newConsumerWorld(t *testing.T, opts ...wiretest.Option) *consumerWorld {
	t.Helper()
	w := newChatWorld(t, true, opts...)
	serveLive(t, w)
	cw := &consumerWorld{chatWorld: w}
	cw.robinSupport.Id = w.grant(t, w.robin, "space", w.support, "viewer")
	return cw
}

// consumer creates (or reads) a's consumer name and checks the status.
// robinsBacklog creates Robin's consumer main and has Alex post n updates in tickets, which
// Robin may read, and n in campaigns, which he may not; it returns the consumer and what
// listEvents gives Robin after its acked_seq: the n updates.
func (w *consumerWorld) robinsBacklog(t *testing.T, n int) (apigen.Consumer, []int64) {
	t.Helper()
	c := w.consumer(t, w.robin, "main", http.StatusCreated)
	for i := range n {
		w.post(t, w.alex, w.ticketThread, fmt.Sprintf("Update %d", i))
		w.post(t, w.alex, w.campaignThread, fmt.Sprintf("Campaign %d", i))
	}
	want := w.restSeqs(t, w.robin, c.AckedSeq)
	if len(want) != n {
		t.Fatalf("listEvents gave Robin %v, want the %d posts in tickets", want, n)
	}
	return c, want
}

func (w *consumerWorld) consumer(t *testing.T, a worldActor, name string, want int) apigen.Consumer {
	t.Helper()
	var c apigen.Consumer
	w.must(t, a, http.MethodPut, "/api/v1/consumers/"+name, "", want, &c)
	return c
}

// ack acknowledges seq for a's consumer name and checks the status.
func (w *consumerWorld) ack(t *testing.T, a worldActor, name string, seq int64, want int) apigen.Consumer {
	t.Helper()
	var c apigen.Consumer
	var out any
	if want == http.StatusOK {
		out = &c
	}
	w.must(t, a, http.MethodPost, "/api/v1/consumers/"+name+"/ack", fmt.Sprintf(`{"seq":%d}`, seq), want, out)
	return c
}

// consumerPage reads one page of a's consumer name.
func (w *consumerWorld) consumerPage(t *testing.T, a worldActor, name string) cuPage {
	t.Helper()
	var p cuPage
	r := w.must(t, a, http.MethodGet, "/api/v1/consumers/"+name+"/events", "", http.StatusOK, &p)
	if cc := r.Header.Get("Cache-Control"); cc != syncCacheControl {
		t.Fatalf("listConsumerEvents has Cache-Control %q, want %q", cc, syncCacheControl)
	}
	return p
}

// consumerPageQuery reads one page of a's consumer name with the query (after=, limit=).
func (w *consumerWorld) consumerPageQuery(t *testing.T, a worldActor, name, query string) cuPage {
	t.Helper()
	var p cuPage
	w.must(t, a, http.MethodGet, "/api/v1/consumers/"+name+"/events?"+query, "", http.StatusOK, &p)
	return p
}

// restSeqs is listEvents as a from after to the head: the seqs delivered.
func (w *consumerWorld) restSeqs(t *testing.T, a worldActor, after int64) []int64 {
	t.Helper()
	return w.restEvents(t, a, after, w.head(t))
}

// drainConsumer pages a's consumer until caught up, acking each page's next_cursor, and
// returns the seqs delivered.
func (w *consumerWorld) drainConsumer(t *testing.T, a worldActor, name string) []int64 {
	t.Helper()
	var out []int64
	for range 1000 {
		p := w.consumerPage(t, a, name)
		out = append(out, cuSeqs(p.Events)...)
		// Acked also when the page is empty: invisible events moved next_cursor.
		w.ack(t, a, name, p.NextCursor, http.StatusOK)
		if p.NextCursor == p.HeadSeq && len(p.Events) == 0 {
			return out
		}
	}
	t.Fatalf("consumer %s of %s never caught up", name, a.name)
	return nil
}

// TestConsumerWhoAndNames: names are checked; a principal's count is capped by
// sync.max_consumers_per_principal; create is idempotent; list and delete; names are per
// principal, and a person may hold consumers too.
func TestConsumerWhoAndNames(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t,
		wiretest.WithSetting(syncapp.KeyMaxConsumersPerPrincipal, "2"),
		wiretest.WithSetting(syncapp.KeyConsumerNameMaxLength, "8"))
	for _, bad := range []string{"Main", "-main", "toolong12", "caf%C3%A9"} {
		if r := w.do(t, w.robin, http.MethodPut, "/api/v1/consumers/"+bad, ""); r.Status != http.StatusBadRequest {
			t.Fatalf("createConsumer %q = %d, want 400; body %s", bad, r.Status, r.Body)
		}
	}
	head := w.head(t)
	first := w.consumer(t, w.robin, "main", http.StatusCreated)
	if first.Name != "main" || first.AckedSeq != head || first.SyncEpoch != w.epoch(t) {
		t.Fatalf("new consumer %+v, want main at head %d in epoch %s", first, head, w.epoch(t))
	}
	w.post(t, w.alex, w.ticketThread, "One more")
	again := w.consumer(t, w.robin, "main", http.StatusOK)
	if again != first {
		t.Fatalf("createConsumer again = %+v, want the first unchanged %+v", again, first)
	}
	w.consumer(t, w.robin, "b.2", http.StatusCreated)
	if r := w.do(t, w.robin, http.MethodPut, "/api/v1/consumers/c", ""); r.Status != http.StatusConflict {
		t.Fatalf("a third consumer (cap 2) = %d, want 409; body %s", r.Status, r.Body)
	}
	var list apigen.ConsumerList
	w.must(t, w.robin, http.MethodGet, "/api/v1/consumers", "", http.StatusOK, &list)
	if len(list.Consumers) != 2 || list.Consumers[0].Name != "b.2" || list.Consumers[1].Name != "main" {
		t.Fatalf("listConsumers = %+v, want b.2 and main", list.Consumers)
	}
	w.must(t, w.robin, http.MethodDelete, "/api/v1/consumers/b.2", "", http.StatusNoContent, nil)
	w.must(t, w.robin, http.MethodDelete, "/api/v1/consumers/b.2", "", http.StatusNoContent, nil)
	w.consumer(t, w.robin, "c", http.StatusCreated)
	for _, r := range []*wiretest.Response{
		w.do(t, w.robin, http.MethodGet, "/api/v1/consumers/gone", ""),
		w.do(t, w.robin, http.MethodGet, "/api/v1/consumers/gone/events", ""),
		w.do(t, w.robin, http.MethodPost, "/api/v1/consumers/gone/ack", `{"seq":1}`),
	} {
		if r.Status != http.StatusNotFound {
			t.Fatalf("an unknown consumer answered %d, want 404; body %s", r.Status, r.Body)
		}
	}
	// Names are per principal: an app with events:subscribe has its own main.
	app := w.app(t, "Relay", "relay", "events:subscribe")
	w.consumer(t, app, "main", http.StatusCreated)
	w.consumer(t, w.robin, "main", http.StatusOK)
	w.consumer(t, w.sam, "main", http.StatusCreated)
}

// TestConsumerAck: an ack moves the consumer forward, never back, idempotently; an ack above
// the head is refused with 409 and changes nothing.
func TestConsumerAck(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c := w.consumer(t, w.robin, "main", http.StatusCreated)
	for i := range 3 {
		w.post(t, w.alex, w.ticketThread, fmt.Sprintf("Update %d", i))
	}
	head := w.head(t)
	w.ack(t, w.robin, "main", head+1, http.StatusConflict)
	if got := w.consumer(t, w.robin, "main", http.StatusOK); got.AckedSeq != c.AckedSeq {
		t.Fatalf("after an ack above the head: acked_seq %d, want %d", got.AckedSeq, c.AckedSeq)
	}
	w.env.Clock.Advance(time.Second)
	mid := w.ack(t, w.robin, "main", head-1, http.StatusOK)
	if mid.AckedSeq != head-1 || !mid.UpdatedAt.After(c.UpdatedAt) {
		t.Fatalf("ack %d = %+v, want acked_seq %d and updated_at after %s", head-1, mid, head-1, c.UpdatedAt)
	}
	w.env.Clock.Advance(time.Second)
	if again := w.ack(t, w.robin, "main", head-1, http.StatusOK); again != mid {
		t.Fatalf("the same ack twice = %+v, want %+v unchanged", again, mid)
	}
	if back := w.ack(t, w.robin, "main", c.AckedSeq, http.StatusOK); back != mid {
		t.Fatalf("an ack below acked_seq = %+v, want %+v unchanged", back, mid)
	}
	w.must(t, w.robin, http.MethodPost, "/api/v1/consumers/main/ack", `{"seq":-1}`, http.StatusBadRequest, nil)
	if top := w.ack(t, w.robin, "main", head, http.StatusOK); top.AckedSeq != head {
		t.Fatalf("ack of the head = %+v, want acked_seq %d", top, head)
	}
}

// TestConsumerRedeliversUntilAcked: a consumer's page starts at acked_seq, so what was not
// acknowledged comes again (a client that lost its acks loses nothing), and it equals
// listEvents for the same principal from the same cursor.
func TestConsumerRedeliversUntilAcked(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	_, want := w.robinsBacklog(t, 4)
	first := w.consumerPage(t, w.robin, "main")
	if !slices.Equal(cuSeqs(first.Events), want) || first.NextCursor != first.HeadSeq {
		t.Fatalf("consumer page %v (next_cursor %d, head %d), want %v through the head", cuSeqs(first.Events), first.NextCursor, first.HeadSeq, want)
	}
	// The acks were lost: the same page again.
	if again := w.consumerPage(t, w.robin, "main"); !slices.Equal(cuSeqs(again.Events), want) {
		t.Fatalf("unacknowledged page again %v, want %v", cuSeqs(again.Events), want)
	}
	w.ack(t, w.robin, "main", want[1], http.StatusOK)
	if rest := w.consumerPage(t, w.robin, "main"); !slices.Equal(cuSeqs(rest.Events), want[2:]) {
		t.Fatalf("after acking %d: %v, want %v", want[1], cuSeqs(rest.Events), want[2:])
	}
	w.ack(t, w.robin, "main", first.NextCursor, http.StatusOK)
	if done := w.consumerPage(t, w.robin, "main"); len(done.Events) != 0 || done.NextCursor != done.HeadSeq {
		t.Fatalf("after acking the head: %v next_cursor %d head %d, want nothing", cuSeqs(done.Events), done.NextCursor, done.HeadSeq)
	}
}

// TestConsumerAfter: listConsumerEvents?after= reads ahead of the acks. The page starts after
// the greater of after and acked_seq and equals listEvents from there; after moves nothing; a
// malformed or negative after is 400 naming after, one above the head 410 cursor_ahead, and the
// consumer's epoch is checked with it (410 epoch_changed).
func TestConsumerAfter(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c, want := w.robinsBacklog(t, 4)
	head := w.head(t)
	unmoved := func(step string, acked int64) {
		t.Helper()
		if got := w.consumer(t, w.robin, "main", http.StatusOK); got.AckedSeq != acked {
			t.Fatalf("%s: acked_seq %d, want %d (only acks move it)", step, got.AckedSeq, acked)
		}
	}

	// Read ahead: page 1 without after, page 2 after page 1's next_cursor, no ack in between.
	first := w.consumerPageQuery(t, w.robin, "main", "limit=2")
	if !slices.Equal(cuSeqs(first.Events), want[:2]) {
		t.Fatalf("first page %v, want %v", cuSeqs(first.Events), want[:2])
	}
	second := w.consumerPageQuery(t, w.robin, "main", fmt.Sprintf("after=%d&limit=2", first.NextCursor))
	if rest := w.restSeqs(t, w.robin, first.NextCursor); !slices.Equal(cuSeqs(second.Events), rest[:2]) || !slices.Equal(rest, want[2:]) {
		t.Fatalf("the page after %d is %v, listEvents from there %v (want %v)", first.NextCursor, cuSeqs(second.Events), rest, want[2:])
	}
	last := w.consumerPageQuery(t, w.robin, "main", fmt.Sprintf("after=%d", second.NextCursor))
	if len(last.Events) != 0 || last.NextCursor != head || last.HeadSeq != head {
		t.Fatalf("the page after %d: %v next_cursor %d head %d, want nothing up to the head %d", second.NextCursor, cuSeqs(last.Events), last.NextCursor, last.HeadSeq, head)
	}
	unmoved("after reading ahead", c.AckedSeq)
	// Nothing acked: a reader that restarts without after gets everything again.
	if again := w.consumerPage(t, w.robin, "main"); !slices.Equal(cuSeqs(again.Events), want) {
		t.Fatalf("a restart without after got %v, want %v", cuSeqs(again.Events), want)
	}

	// At or below acked_seq: the page starts at acked_seq (what is acknowledged is done).
	w.ack(t, w.robin, "main", want[1], http.StatusOK)
	for _, after := range []int64{0, c.AckedSeq, want[0], want[1]} {
		if p := w.consumerPageQuery(t, w.robin, "main", fmt.Sprintf("after=%d", after)); !slices.Equal(cuSeqs(p.Events), want[2:]) || p.NextCursor != head {
			t.Fatalf("after=%d with acked_seq %d: %v next_cursor %d, want %v through the head", after, want[1], cuSeqs(p.Events), p.NextCursor, want[2:])
		}
	}
	if p := w.consumerPageQuery(t, w.robin, "main", fmt.Sprintf("after=%d", want[2])); !slices.Equal(cuSeqs(p.Events), want[3:]) {
		t.Fatalf("after=%d: %v, want %v", want[2], cuSeqs(p.Events), want[3:])
	}
	unmoved("after the reads", want[1])

	// A cursor that is no cursor names after.
	for _, query := range []string{"after=x", "after=-1", "after=1.5", "after="} {
		p := w.do(t, w.robin, http.MethodGet, "/api/v1/consumers/main/events?"+query, "").RequireProblem(t, http.StatusBadRequest, "validation_failed")
		if len(p.Errors) != 1 || p.Errors[0].Field != "after" {
			t.Fatalf("?%s: errors %+v, want one naming after", query, p.Errors)
		}
	}
	// Above the head: cursor_ahead, as listEvents answers it.
	requireConsumerResync(t, w, fmt.Sprintf("after=%d", head+1), "cursor_ahead", "retry", head)
	unmoved("after the refusals", want[1])

	// The consumer's epoch is checked with after too (after a restore its epoch is not the
	// instance's), before the cursor.
	pool, err := wire.NewPool(t.Context(), w.env.DatabaseURL, 1)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	defer pool.Close()
	if _, err := instancepg.New(tx.NewRunner(pool)).RotateEpoch(t.Context(), instance.RestoreInput{
		At: w.env.Clock.Now(), How: instance.RestoreByCommand, Source: "consumer-after.dump",
	}); err != nil {
		t.Fatalf("rotate the sync epoch: %v", err)
	}
	for _, query := range []string{"", fmt.Sprintf("after=%d", want[2]), fmt.Sprintf("after=%d", head+1)} {
		requireConsumerResync(t, w, query, "epoch_changed", "snapshot", head)
	}
}

// requireConsumerResync reads Robin's consumer main with the query and fails unless it answers
// 410 resync_required with the reason, its recovery and the head.
func requireConsumerResync(t *testing.T, w *consumerWorld, query, reason, recovery string, head int64) {
	t.Helper()
	r := w.do(t, w.robin, http.MethodGet, "/api/v1/consumers/main/events?"+query, "")
	r.RequireProblem(t, http.StatusGone, "resync_required")
	var g goneBody
	r.JSON(t, &g)
	if g.Reason != reason || g.Recovery != recovery || g.HeadSeq != head {
		t.Fatalf("?%s: 410 %+v, want reason %s, recovery %s, head %d", query, g, reason, recovery, head)
	}
	if cc := r.Header.Get("Cache-Control"); cc != syncCacheControl {
		t.Fatalf("?%s: the 410 has Cache-Control %q, want %q", query, cc, syncCacheControl)
	}
}

// TestConsumerIsCatchUpAtDeliveryTime: a grant revoked between the events and their delivery
// hides them from the consumer exactly as from listEvents; a grant given later shows them.
func TestConsumerIsCatchUpAtDeliveryTime(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c := w.consumer(t, w.robin, "main", http.StatusCreated)
	w.post(t, w.alex, w.ticketThread, "Before the revoke")
	w.revoke(t, w.robinSupport.Id)
	w.post(t, w.alex, w.ticketThread, "After the revoke")
	rest := w.restSeqs(t, w.robin, c.AckedSeq)
	got := w.drainConsumer(t, w.robin, "main")
	if !slices.Equal(got, rest) {
		t.Fatalf("consumer delivered %v, listEvents %v", got, rest)
	}
	for _, e := range w.eventsAfter(t, c.AckedSeq) {
		if e.Type == "message.created" && slices.Contains(got, e.Seq) {
			t.Fatalf("the consumer delivered message.created %d of a channel Robin may no longer read", e.Seq)
		}
	}
	// A new consumer from before, with the grant back: everything in tickets again, for both.
	w.grant(t, w.robin, "space", w.support, "viewer")
	w.consumer(t, w.robin, "second", http.StatusCreated) // at the head: nothing
	if got := w.drainConsumer(t, w.robin, "second"); len(got) != 0 {
		t.Fatalf("a consumer created at the head delivered %v", got)
	}
}

// gwConsumerFrame is the acked frame.
type gwConsumerFrame struct {
	Op       string `json:"op"`
	Consumer string `json:"consumer"`
	AckedSeq int64  `json:"acked_seq"`
}

// TestGatewayConsumer: resume with a consumer starts at its acked_seq and delivers what
// listEvents gives from there; ack frames move it (acked answers), and a reconnect continues
// after the last ack; refused frames close the connection as spec 03 says.
func TestGatewayConsumer(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	_, want := w.robinsBacklog(t, 3)
	head := w.head(t)

	conn := mustDial(t, w.env.Server.URL, w.robin.token)
	conn.send(`{"op":"resume","consumer":"main"}`)
	got, _ := conn.until(head, true)
	if !slices.Equal(gwSeqs(got), want) {
		t.Fatalf("gateway consumer delivered %v, listEvents %v", gwSeqs(got), want)
	}
	conn.send(fmt.Sprintf(`{"op":"ack","seq":%d}`, want[0]))
	acked := conn.expectAcked()
	if acked.Consumer != "main" || acked.AckedSeq != want[0] {
		t.Fatalf("acked frame %+v, want main at %d", acked, want[0])
	}
	conn.send(`{"op":"ack","seq":0}`) // below: nothing moves
	if again := conn.expectAcked(); again.AckedSeq != want[0] {
		t.Fatalf("an ack below acked_seq answered %+v, want %d", again, want[0])
	}
	_ = conn.conn.Close(websocket.StatusNormalClosure, "")

	// The REST view of the consumer agrees, and a reconnect continues after the ack.
	if rc := w.consumer(t, w.robin, "main", http.StatusOK); rc.AckedSeq != want[0] {
		t.Fatalf("getConsumer after the gateway ack: %d, want %d", rc.AckedSeq, want[0])
	}
	again := mustDial(t, w.env.Server.URL, w.robin.token)
	again.send(`{"op":"resume","consumer":"main"}`)
	got, _ = again.until(head, true)
	if !slices.Equal(gwSeqs(got), want[1:]) {
		t.Fatalf("reconnected consumer delivered %v, want %v", gwSeqs(got), want[1:])
	}
	again.send(fmt.Sprintf(`{"op":"ack","seq":%d}`, head+1000))
	if code, _ := again.closed(); code != gateway.CloseBadFrame {
		t.Fatalf("an ack above the head closed with %d, want %d", code, gateway.CloseBadFrame)
	}

	for _, tc := range []struct {
		name  string
		token string
		first string
		then  string
		code  websocket.StatusCode
	}{
		{"unknown consumer", w.robin.token, `{"op":"resume","consumer":"gone"}`, "", gateway.CloseForbidden},
		{"another principal's consumer", w.sam.token, `{"op":"resume","consumer":"main"}`, "", gateway.CloseForbidden},
		{"consumer and after", w.robin.token, `{"op":"resume","consumer":"main","after":1}`, "", gateway.CloseBadFrame},
		{"bad name", w.robin.token, `{"op":"resume","consumer":"Main"}`, "", gateway.CloseBadFrame},
		{"ack without consumer", w.robin.token, fmt.Sprintf(`{"op":"resume","after":%d}`, head), `{"op":"ack","seq":1}`, gateway.CloseBadFrame},
	} {
		conn := mustDial(t, w.env.Server.URL, tc.token)
		conn.send(tc.first)
		if tc.then != "" {
			conn.expect("catchup.complete")
			conn.send(tc.then)
		}
		if code, _ := conn.closed(); code != tc.code {
			t.Errorf("%s: closed with %d, want %d", tc.name, code, tc.code)
		}
	}
}

// expectAcked reads frames until an acked frame (skipping heartbeats and cursors).
func (c *gwClient) expectAcked() gwConsumerFrame {
	c.t.Helper()
	for {
		f := c.next()
		switch f.Op {
		case "heartbeat", "cursor":
			continue
		case "acked":
			var a gwConsumerFrame
			if err := json.Unmarshal(f.raw, &a); err != nil {
				c.t.Fatalf("acked frame %s: %v", f.raw, err)
			}
			return a
		default:
			c.t.Fatalf("frame %s, want acked", f.raw)
		}
	}
}
