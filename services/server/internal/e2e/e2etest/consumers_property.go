package e2etest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/coder/websocket"
)

// RestSession is one worker session over REST: one page (the worlds are small enough for one),
// a random prefix of it processed before the worker dies, and the ack of that prefix sent or
// lost. It returns the seqs delivered, how many of them were processed, and the ack that
// arrived (-1 when none).
func (w *ConsumerWorld) RestSession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	p := w.ConsumerPage(t, w.Robin, "main")
	got := CatchUpSeqs(p.Events)
	if p.NextCursor != p.HeadSeq {
		t.Fatalf("a consumer page of a small world ends at %d below the head %d", p.NextCursor, p.HeadSeq)
	}
	n := r.IntN(len(got) + 1)
	ack := int64(-1)
	switch {
	case n == len(got):
		ack = p.NextCursor
	case n > 0:
		ack = got[n-1]
	}
	if ack < 0 || r.IntN(3) == 0 {
		return got, n, -1 // killed before the ack, or the ack was lost
	}
	w.Ack(t, w.Robin, "main", ack, http.StatusOK)
	return got, n, ack
}

// GatewaySession is one worker session over the gateway: resume with the consumer, read
// through catchup.complete, ack a random prefix with an ack frame (or lose it), and drop the
// connection.
func (w *ConsumerWorld) GatewaySession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	head := w.Head(t)
	c := MustDial(t, w.Env.Server.URL, w.Robin.Token)
	defer func() { _ = c.Conn.CloseNow() }()
	c.Send(`{"op":"resume","consumer":"main"}`)
	envs, _ := c.Until(head, true)
	got := GatewaySeqs(envs)
	n := r.IntN(len(got) + 1)
	ack := int64(-1)
	switch {
	case n == len(got):
		ack = head
	case n > 0:
		ack = got[n-1]
	}
	if ack < 0 || r.IntN(3) == 0 {
		_ = c.Conn.Close(websocket.StatusNormalClosure, "")
		return got, n, -1
	}
	c.Send(fmt.Sprintf(`{"op":"ack","seq":%d}`, ack))
	if a := c.ExpectAcked(); a.AckedSeq < ack {
		t.Fatalf("acked frame %+v after an ack of %d", a, ack)
	}
	return got, n, ack
}

// ReadAheadSession is one worker session over REST that reads ahead of its acks, as the
// benchmark's agent does: small pages (limit 1 to 3), each after the last page's next_cursor
// (the first one after a random cursor at or below acked_seq, or none: both start at
// acked_seq). A page's ack (its next_cursor) goes out after the next page was read, so it lags
// a page, only when the worker processed the whole page before it died (after a random number
// of the events ListEvents gives it), and is lost at random. It returns the seqs delivered, how
// many of them were processed, and the greatest ack that arrived (-1 when none).
func (w *ConsumerWorld) ReadAheadSession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	acked := w.Consumer(t, w.Robin, "main", http.StatusOK).AckedSeq
	n := r.IntN(len(w.RestSeqs(t, w.Robin, acked)) + 1) // processed before the worker died
	limit := 1 + r.IntN(3)
	query := fmt.Sprintf("limit=%d", limit)
	if r.IntN(2) == 0 {
		query += fmt.Sprintf("&after=%d", r.Int64N(acked+1))
	}
	var got []int64
	arrived := int64(-1)
	pendingEnd, pendingCursor := -1, int64(0) // the page whose ack is due, if any
	ackDue := func() {
		if pendingEnd < 0 || pendingEnd > n || r.IntN(3) == 0 {
			return // nothing due, the page not all processed, or the ack lost
		}
		w.Ack(t, w.Robin, "main", pendingCursor, http.StatusOK)
		arrived = max(arrived, pendingCursor)
	}
	for range 1000 {
		p := w.ConsumerPageQuery(t, w.Robin, "main", query)
		got = append(got, CatchUpSeqs(p.Events)...)
		ackDue() // the previous page's ack, now that this one is read
		pendingEnd, pendingCursor = len(got), p.NextCursor
		if p.NextCursor == p.HeadSeq {
			ackDue()
			return got, min(n, len(got)), arrived
		}
		query = fmt.Sprintf("limit=%d&after=%d", limit, p.NextCursor)
	}
	t.Fatalf("reading ahead from %d never reached the head", acked)
	return nil, 0, -1
}
