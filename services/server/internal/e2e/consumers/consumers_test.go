package consumers

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

func newConsumerWorld(t *testing.T, opts ...wiretest.Option) *e2etest.ConsumerWorld {
	t.Helper()
	w := e2etest.NewChatWorld(t, true, opts...)
	e2etest.ServeLive(t, w)
	cw := &e2etest.ConsumerWorld{ChatWorld: w}
	cw.RobinSupport.Id = w.Grant(t, w.Robin, "space", w.Support, "viewer")
	return cw
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
		if r := w.Do(t, w.Robin, http.MethodPut, "/api/v1/consumers/"+bad, ""); r.Status != http.StatusBadRequest {
			t.Fatalf("createConsumer %q = %d, want 400; body %s", bad, r.Status, r.Body)
		}
	}
	head := w.Head(t)
	first := w.Consumer(t, w.Robin, "main", http.StatusCreated)
	if first.Name != "main" || first.AckedSeq != head || first.SyncEpoch != w.Epoch(t) {
		t.Fatalf("new consumer %+v, want main at head %d in epoch %s", first, head, w.Epoch(t))
	}
	w.Post(t, w.Alex, w.TicketThread, "One more")
	again := w.Consumer(t, w.Robin, "main", http.StatusOK)
	if again != first {
		t.Fatalf("createConsumer again = %+v, want the first unchanged %+v", again, first)
	}
	w.Consumer(t, w.Robin, "b.2", http.StatusCreated)
	if r := w.Do(t, w.Robin, http.MethodPut, "/api/v1/consumers/c", ""); r.Status != http.StatusConflict {
		t.Fatalf("a third consumer (cap 2) = %d, want 409; body %s", r.Status, r.Body)
	}
	var list apigen.ConsumerList
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/consumers", "", http.StatusOK, &list)
	if len(list.Consumers) != 2 || list.Consumers[0].Name != "b.2" || list.Consumers[1].Name != "main" {
		t.Fatalf("listConsumers = %+v, want b.2 and main", list.Consumers)
	}
	w.Must(t, w.Robin, http.MethodDelete, "/api/v1/consumers/b.2", "", http.StatusNoContent, nil)
	w.Must(t, w.Robin, http.MethodDelete, "/api/v1/consumers/b.2", "", http.StatusNoContent, nil)
	w.Consumer(t, w.Robin, "c", http.StatusCreated)
	for _, r := range []*wiretest.Response{
		w.Do(t, w.Robin, http.MethodGet, "/api/v1/consumers/gone", ""),
		w.Do(t, w.Robin, http.MethodGet, "/api/v1/consumers/gone/events", ""),
		w.Do(t, w.Robin, http.MethodPost, "/api/v1/consumers/gone/ack", `{"seq":1}`),
	} {
		if r.Status != http.StatusNotFound {
			t.Fatalf("an unknown consumer answered %d, want 404; body %s", r.Status, r.Body)
		}
	}
	// Names are per principal: an app with events:subscribe has its own main.
	app := w.App(t, "Relay", "relay", "events:subscribe")
	w.Consumer(t, app, "main", http.StatusCreated)
	w.Consumer(t, w.Robin, "main", http.StatusOK)
	w.Consumer(t, w.Sam, "main", http.StatusCreated)
}

// TestConsumerAck: an ack moves the consumer forward, never back, idempotently; an ack above
// the head is refused with 409 and changes nothing.
func TestConsumerAck(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c := w.Consumer(t, w.Robin, "main", http.StatusCreated)
	for i := range 3 {
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Update %d", i))
	}
	head := w.Head(t)
	w.Ack(t, w.Robin, "main", head+1, http.StatusConflict)
	if got := w.Consumer(t, w.Robin, "main", http.StatusOK); got.AckedSeq != c.AckedSeq {
		t.Fatalf("after an ack above the head: acked_seq %d, want %d", got.AckedSeq, c.AckedSeq)
	}
	w.Env.Clock.Advance(time.Second)
	mid := w.Ack(t, w.Robin, "main", head-1, http.StatusOK)
	if mid.AckedSeq != head-1 || !mid.UpdatedAt.After(c.UpdatedAt) {
		t.Fatalf("ack %d = %+v, want acked_seq %d and updated_at after %s", head-1, mid, head-1, c.UpdatedAt)
	}
	w.Env.Clock.Advance(time.Second)
	if again := w.Ack(t, w.Robin, "main", head-1, http.StatusOK); again != mid {
		t.Fatalf("the same ack twice = %+v, want %+v unchanged", again, mid)
	}
	if back := w.Ack(t, w.Robin, "main", c.AckedSeq, http.StatusOK); back != mid {
		t.Fatalf("an ack below acked_seq = %+v, want %+v unchanged", back, mid)
	}
	w.Must(t, w.Robin, http.MethodPost, "/api/v1/consumers/main/ack", `{"seq":-1}`, http.StatusBadRequest, nil)
	if top := w.Ack(t, w.Robin, "main", head, http.StatusOK); top.AckedSeq != head {
		t.Fatalf("ack of the head = %+v, want acked_seq %d", top, head)
	}
}

// TestConsumerRedeliversUntilAcked: a consumer's page starts at acked_seq, so what was not
// acknowledged comes again (a client that lost its acks loses nothing), and it equals
// ListEvents for the same principal from the same cursor.
func TestConsumerRedeliversUntilAcked(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	_, want := w.RobinsBacklog(t, 4)
	first := w.ConsumerPage(t, w.Robin, "main")
	if !slices.Equal(e2etest.CatchUpSeqs(first.Events), want) || first.NextCursor != first.HeadSeq {
		t.Fatalf("consumer page %v (next_cursor %d, head %d), want %v through the head", e2etest.CatchUpSeqs(first.Events), first.NextCursor, first.HeadSeq, want)
	}
	// The acks were lost: the same page again.
	if again := w.ConsumerPage(t, w.Robin, "main"); !slices.Equal(e2etest.CatchUpSeqs(again.Events), want) {
		t.Fatalf("unacknowledged page again %v, want %v", e2etest.CatchUpSeqs(again.Events), want)
	}
	w.Ack(t, w.Robin, "main", want[1], http.StatusOK)
	if rest := w.ConsumerPage(t, w.Robin, "main"); !slices.Equal(e2etest.CatchUpSeqs(rest.Events), want[2:]) {
		t.Fatalf("after acking %d: %v, want %v", want[1], e2etest.CatchUpSeqs(rest.Events), want[2:])
	}
	w.Ack(t, w.Robin, "main", first.NextCursor, http.StatusOK)
	if done := w.ConsumerPage(t, w.Robin, "main"); len(done.Events) != 0 || done.NextCursor != done.HeadSeq {
		t.Fatalf("after acking the head: %v next_cursor %d head %d, want nothing", e2etest.CatchUpSeqs(done.Events), done.NextCursor, done.HeadSeq)
	}
}

// TestConsumerAfter: listConsumerEvents?after= reads ahead of the acks. The page starts after
// the greater of after and acked_seq and equals ListEvents from there; after moves nothing; a
// malformed or negative after is 400 naming after, one above the head 410 cursor_ahead, and the
// consumer's epoch is checked with it (410 epoch_changed).
func TestConsumerAfter(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c, want := w.RobinsBacklog(t, 4)
	head := w.Head(t)
	unmoved := func(step string, acked int64) {
		t.Helper()
		if got := w.Consumer(t, w.Robin, "main", http.StatusOK); got.AckedSeq != acked {
			t.Fatalf("%s: acked_seq %d, want %d (only acks move it)", step, got.AckedSeq, acked)
		}
	}

	// Read ahead: page 1 without after, page 2 after page 1's next_cursor, no ack in between.
	first := w.ConsumerPageQuery(t, w.Robin, "main", "limit=2")
	if !slices.Equal(e2etest.CatchUpSeqs(first.Events), want[:2]) {
		t.Fatalf("first page %v, want %v", e2etest.CatchUpSeqs(first.Events), want[:2])
	}
	second := w.ConsumerPageQuery(t, w.Robin, "main", fmt.Sprintf("after=%d&limit=2", first.NextCursor))
	if rest := w.RestSeqs(t, w.Robin, first.NextCursor); !slices.Equal(e2etest.CatchUpSeqs(second.Events), rest[:2]) || !slices.Equal(rest, want[2:]) {
		t.Fatalf("the page after %d is %v, listEvents from there %v (want %v)", first.NextCursor, e2etest.CatchUpSeqs(second.Events), rest, want[2:])
	}
	last := w.ConsumerPageQuery(t, w.Robin, "main", fmt.Sprintf("after=%d", second.NextCursor))
	if len(last.Events) != 0 || last.NextCursor != head || last.HeadSeq != head {
		t.Fatalf("the page after %d: %v next_cursor %d head %d, want nothing up to the head %d", second.NextCursor, e2etest.CatchUpSeqs(last.Events), last.NextCursor, last.HeadSeq, head)
	}
	unmoved("after reading ahead", c.AckedSeq)
	// Nothing acked: a reader that restarts without after gets everything again.
	if again := w.ConsumerPage(t, w.Robin, "main"); !slices.Equal(e2etest.CatchUpSeqs(again.Events), want) {
		t.Fatalf("a restart without after got %v, want %v", e2etest.CatchUpSeqs(again.Events), want)
	}

	// At or below acked_seq: the page starts at acked_seq (what is acknowledged is done).
	w.Ack(t, w.Robin, "main", want[1], http.StatusOK)
	for _, after := range []int64{0, c.AckedSeq, want[0], want[1]} {
		if p := w.ConsumerPageQuery(t, w.Robin, "main", fmt.Sprintf("after=%d", after)); !slices.Equal(e2etest.CatchUpSeqs(p.Events), want[2:]) || p.NextCursor != head {
			t.Fatalf("after=%d with acked_seq %d: %v next_cursor %d, want %v through the head", after, want[1], e2etest.CatchUpSeqs(p.Events), p.NextCursor, want[2:])
		}
	}
	if p := w.ConsumerPageQuery(t, w.Robin, "main", fmt.Sprintf("after=%d", want[2])); !slices.Equal(e2etest.CatchUpSeqs(p.Events), want[3:]) {
		t.Fatalf("after=%d: %v, want %v", want[2], e2etest.CatchUpSeqs(p.Events), want[3:])
	}
	unmoved("after the reads", want[1])

	// A cursor that is no cursor names after.
	for _, query := range []string{"after=x", "after=-1", "after=1.5", "after="} {
		p := w.Do(t, w.Robin, http.MethodGet, "/api/v1/consumers/main/events?"+query, "").RequireProblem(t, http.StatusBadRequest, "validation_failed")
		if len(p.Errors) != 1 || p.Errors[0].Field != "after" {
			t.Fatalf("?%s: errors %+v, want one naming after", query, p.Errors)
		}
	}
	// Above the head: cursor_ahead, as ListEvents answers it.
	requireConsumerResync(t, w, fmt.Sprintf("after=%d", head+1), "cursor_ahead", "retry", head)
	unmoved("after the refusals", want[1])

	// The consumer's epoch is checked with after too (after a restore its epoch is not the
	// instance's), before the cursor.
	pool, err := wire.NewPool(t.Context(), w.Env.DatabaseURL, 1)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	defer pool.Close()
	if _, err := instancepg.New(tx.NewRunner(pool)).RotateEpoch(t.Context(), instance.RestoreInput{
		At: w.Env.Clock.Now(), How: instance.RestoreByCommand, Source: "consumer-after.dump",
	}); err != nil {
		t.Fatalf("rotate the sync epoch: %v", err)
	}
	for _, query := range []string{"", fmt.Sprintf("after=%d", want[2]), fmt.Sprintf("after=%d", head+1)} {
		requireConsumerResync(t, w, query, "epoch_changed", "snapshot", head)
	}
}

// requireConsumerResync reads Robin's consumer main with the query and fails unless it answers
// 410 resync_required with the reason, its recovery and the head.
func requireConsumerResync(t *testing.T, w *e2etest.ConsumerWorld, query, reason, recovery string, head int64) {
	t.Helper()
	r := w.Do(t, w.Robin, http.MethodGet, "/api/v1/consumers/main/events?"+query, "")
	r.RequireProblem(t, http.StatusGone, "resync_required")
	var g e2etest.GoneBody
	r.JSON(t, &g)
	if g.Reason != reason || g.Recovery != recovery || g.HeadSeq != head {
		t.Fatalf("?%s: 410 %+v, want reason %s, recovery %s, head %d", query, g, reason, recovery, head)
	}
	if cc := r.Header.Get("Cache-Control"); cc != e2etest.SyncCacheControl {
		t.Fatalf("?%s: the 410 has Cache-Control %q, want %q", query, cc, e2etest.SyncCacheControl)
	}
}

// TestConsumerIsCatchUpAtDeliveryTime: a grant revoked between the events and their delivery
// hides them from the consumer exactly as from ListEvents; a grant given later shows them.
func TestConsumerIsCatchUpAtDeliveryTime(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	c := w.Consumer(t, w.Robin, "main", http.StatusCreated)
	w.Post(t, w.Alex, w.TicketThread, "Before the revoke")
	w.Revoke(t, w.RobinSupport.Id)
	w.Post(t, w.Alex, w.TicketThread, "After the revoke")
	rest := w.RestSeqs(t, w.Robin, c.AckedSeq)
	got := w.DrainConsumer(t, w.Robin, "main")
	if !slices.Equal(got, rest) {
		t.Fatalf("consumer delivered %v, listEvents %v", got, rest)
	}
	for _, e := range w.EventsAfter(t, c.AckedSeq) {
		if e.Type == "message.created" && slices.Contains(got, e.Seq) {
			t.Fatalf("the consumer delivered message.created %d of a channel Robin may no longer read", e.Seq)
		}
	}
	// A new consumer from before, with the grant back: everything in tickets again, for both.
	w.Grant(t, w.Robin, "space", w.Support, "viewer")
	w.Consumer(t, w.Robin, "second", http.StatusCreated) // at the head: nothing
	if got := w.DrainConsumer(t, w.Robin, "second"); len(got) != 0 {
		t.Fatalf("a consumer created at the head delivered %v", got)
	}
}

// TestGatewayConsumer: resume with a consumer starts at its acked_seq and delivers what
// ListEvents gives from there; ack frames move it (acked answers), and a reconnect continues
// after the last ack; refused frames close the connection as spec 03 says.
func TestGatewayConsumer(t *testing.T) {
	t.Parallel()
	w := newConsumerWorld(t)
	_, want := w.RobinsBacklog(t, 3)
	head := w.Head(t)

	conn := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	conn.Send(`{"op":"resume","consumer":"main"}`)
	got, _ := conn.Until(head, true)
	if !slices.Equal(e2etest.GatewaySeqs(got), want) {
		t.Fatalf("gateway consumer delivered %v, listEvents %v", e2etest.GatewaySeqs(got), want)
	}
	conn.Send(fmt.Sprintf(`{"op":"ack","seq":%d}`, want[0]))
	acked := conn.ExpectAcked()
	if acked.Consumer != "main" || acked.AckedSeq != want[0] {
		t.Fatalf("acked frame %+v, want main at %d", acked, want[0])
	}
	conn.Send(`{"op":"ack","seq":0}`) // below: nothing moves
	if again := conn.ExpectAcked(); again.AckedSeq != want[0] {
		t.Fatalf("an ack below acked_seq answered %+v, want %d", again, want[0])
	}
	_ = conn.Conn.Close(websocket.StatusNormalClosure, "")

	// The REST view of the consumer agrees, and a reconnect continues after the ack.
	if rc := w.Consumer(t, w.Robin, "main", http.StatusOK); rc.AckedSeq != want[0] {
		t.Fatalf("getConsumer after the gateway ack: %d, want %d", rc.AckedSeq, want[0])
	}
	again := e2etest.MustDial(t, w.Env.Server.URL, w.Robin.Token)
	again.Send(`{"op":"resume","consumer":"main"}`)
	got, _ = again.Until(head, true)
	if !slices.Equal(e2etest.GatewaySeqs(got), want[1:]) {
		t.Fatalf("reconnected consumer delivered %v, want %v", e2etest.GatewaySeqs(got), want[1:])
	}
	again.Send(fmt.Sprintf(`{"op":"ack","seq":%d}`, head+1000))
	if code, _ := again.Closed(); code != gateway.CloseBadFrame {
		t.Fatalf("an ack above the head closed with %d, want %d", code, gateway.CloseBadFrame)
	}

	for _, tc := range []struct {
		name  string
		token string
		first string
		then  string
		code  websocket.StatusCode
	}{
		{"unknown consumer", w.Robin.Token, `{"op":"resume","consumer":"gone"}`, "", gateway.CloseForbidden},
		{"another principal's consumer", w.Sam.Token, `{"op":"resume","consumer":"main"}`, "", gateway.CloseForbidden},
		{"consumer and after", w.Robin.Token, `{"op":"resume","consumer":"main","after":1}`, "", gateway.CloseBadFrame},
		{"bad name", w.Robin.Token, `{"op":"resume","consumer":"Main"}`, "", gateway.CloseBadFrame},
		{"ack without consumer", w.Robin.Token, fmt.Sprintf(`{"op":"resume","after":%d}`, head), `{"op":"ack","seq":1}`, gateway.CloseBadFrame},
	} {
		conn := e2etest.MustDial(t, w.Env.Server.URL, tc.token)
		conn.Send(tc.first)
		if tc.then != "" {
			conn.Expect("catchup.complete")
			conn.Send(tc.then)
		}
		if code, _ := conn.Closed(); code != tc.code {
			t.Errorf("%s: closed with %d, want %d", tc.name, code, tc.code)
		}
	}
}
