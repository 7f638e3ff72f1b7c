package wire_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/coder/websocket"
)

var consumerSeed = flag.Uint64("wire.consumer.seed", 0, "seed of TestConsumerProperty (0: from the clock)")

// consumerWorlds is how many random worlds TestConsumerProperty builds, each with its own
// database.
const consumerWorlds = 3

// TestConsumerProperty is the consumer property test of issue 15. In random worlds Alex posts
// in a channel the agent Robin reads and in one it does not, Robin's grant is revoked and given
// again, and Robin's worker runs sessions over REST, over REST reading ahead of its acks
// (listConsumerEvents?after=, small pages, each page's ack sent a page late or lost), or over
// the gateway at random; each session is killed after processing a random prefix of what it
// got, and its acks are lost at random. After every session:
//
//   - what the consumer delivered is exactly what listEvents gives Robin from the consumer's
//     acked_seq at that moment (so nothing Robin may not read reaches it, a grant revoked
//     between an event and its delivery included);
//   - the consumer's acked_seq is the ack the worker sent when it arrived, else unchanged;
//   - every event delivered and not acknowledged is delivered again by the next session while
//     Robin may still read it, so every event reaches the worker at least once before the
//     consumer passes it.
//
// The seed is logged; -wire.consumer.seed replays it.
func TestConsumerProperty(t *testing.T) {
	t.Parallel()
	seed := propertySeed(t, "wire.consumer.seed", *consumerSeed)
	for i := range consumerWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			w := newConsumerWorld(t)
			grant, granted := w.robinSupport.Id, true
			acked := w.consumer(t, w.robin, "main", http.StatusCreated).AckedSeq
			processed := map[int64]bool{}
			var pending []int64 // delivered, processed, not acknowledged
			for step := range 40 {
				switch k := r.IntN(10); {
				case k < 5:
					thread := w.ticketThread
					if r.IntN(3) == 0 {
						thread = w.campaignThread
					}
					w.post(t, w.alex, thread, fmt.Sprintf("Step %d", step))
				case k < 6:
					if granted {
						w.revoke(t, grant)
					} else {
						grant = w.grant(t, w.robin, "space", w.support, "viewer")
					}
					granted = !granted
				default:
					want := w.restSeqs(t, w.robin, acked)
					for _, s := range pending {
						if s > acked && !slices.Contains(want, s) && granted {
							t.Fatalf("step %d: event %d was delivered, not acknowledged, and is not delivered again while Robin reads Support", step, s)
						}
					}
					session := w.restSession
					switch r.IntN(3) {
					case 0:
						session = w.gatewaySession
					case 1:
						session = w.readAheadSession
					}
					got, n, sent := session(t, r)
					for _, s := range got[:n] {
						processed[s] = true
					}
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: the consumer delivered %v, listEvents from %d gives Robin %v", step, got, acked, want)
					}
					if sent > acked {
						acked = sent
					}
					if c := w.consumer(t, w.robin, "main", http.StatusOK); c.AckedSeq != acked {
						t.Fatalf("step %d: acked_seq %d, want %d", step, c.AckedSeq, acked)
					}
					for _, s := range got {
						if s <= acked && !processed[s] {
							t.Fatalf("step %d: the consumer passed event %d before the worker processed it", step, s)
						}
					}
					pending = slices.DeleteFunc(slices.Clone(got), func(s int64) bool { return s <= acked })
				}
			}
			// The end: a worker that acks everything drains the consumer to the head.
			rest := w.restSeqs(t, w.robin, acked)
			if drained := w.drainConsumer(t, w.robin, "main"); !slices.Equal(drained, rest) {
				t.Fatalf("the final drain delivered %v, listEvents %v", drained, rest)
			}
			if c := w.consumer(t, w.robin, "main", http.StatusOK); c.AckedSeq != w.head(t) {
				t.Fatalf("after the drain acked_seq %d, head %d", c.AckedSeq, w.head(t))
			}
		})
	}
}

// restSession is one worker session over REST: one page (the worlds are small enough for one),
// a random prefix of it processed before the worker dies, and the ack of that prefix sent or
// lost. It returns the seqs delivered, how many of them were processed, and the ack that
// arrived (-1 when none).
func (w *consumerWorld) restSession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	p := w.consumerPage(t, w.robin, "main")
	got := cuSeqs(p.Events)
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
	w.ack(t, w.robin, "main", ack, http.StatusOK)
	return got, n, ack
}

// gatewaySession is one worker session over the gateway: resume with the consumer, read
// through catchup.complete, ack a random prefix with an ack frame (or lose it), and drop the
// connection.
func (w *consumerWorld) gatewaySession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	head := w.head(t)
	c := mustDial(t, w.env.Server.URL, w.robin.token)
	defer func() { _ = c.conn.CloseNow() }()
	c.send(`{"op":"resume","consumer":"main"}`)
	envs, _ := c.until(head, true)
	got := gwSeqs(envs)
	n := r.IntN(len(got) + 1)
	ack := int64(-1)
	switch {
	case n == len(got):
		ack = head
	case n > 0:
		ack = got[n-1]
	}
	if ack < 0 || r.IntN(3) == 0 {
		_ = c.conn.Close(websocket.StatusNormalClosure, "")
		return got, n, -1
	}
	c.send(fmt.Sprintf(`{"op":"ack","seq":%d}`, ack))
	if a := c.expectAcked(); a.AckedSeq < ack {
		t.Fatalf("acked frame %+v after an ack of %d", a, ack)
	}
	return got, n, ack
}

// readAheadSession is one worker session over REST that reads ahead of its acks, as the
// benchmark's agent does: small pages (limit 1 to 3), each after the last page's next_cursor
// (the first one after a random cursor at or below acked_seq, or none: both start at
// acked_seq). A page's ack (its next_cursor) goes out after the next page was read, so it lags
// a page, only when the worker processed the whole page before it died (after a random number
// of the events listEvents gives it), and is lost at random. It returns the seqs delivered, how
// many of them were processed, and the greatest ack that arrived (-1 when none).
func (w *consumerWorld) readAheadSession(t *testing.T, r *rand.Rand) ([]int64, int, int64) {
	t.Helper()
	acked := w.consumer(t, w.robin, "main", http.StatusOK).AckedSeq
	n := r.IntN(len(w.restSeqs(t, w.robin, acked)) + 1) // processed before the worker died
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
		w.ack(t, w.robin, "main", pendingCursor, http.StatusOK)
		arrived = max(arrived, pendingCursor)
	}
	for range 1000 {
		p := w.consumerPageQuery(t, w.robin, "main", query)
		got = append(got, cuSeqs(p.Events)...)
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
