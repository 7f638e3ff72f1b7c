package consumers

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
)

var consumerSeed = flag.Uint64("wire.consumer.seed", 0, "seed of TestConsumerProperty (0: from the clock)")

// consumerWorlds is how many random worlds TestConsumerProperty builds, each with its own
// database.
const consumerWorlds = 3

// TestConsumerProperty is the consumer property test (spec 03, durable consumers). In random worlds Alex posts
// in a channel the agent Robin reads and in one it does not, Robin's grant is revoked and given
// again, and Robin's worker runs sessions over REST, over REST reading ahead of its acks
// (listConsumerEvents?after=, small pages, each page's ack sent a page late or lost), or over
// the gateway at random; each session is killed after processing a random prefix of what it
// got, and its acks are lost at random. After every session:
//
//   - what the consumer delivered is exactly what ListEvents gives Robin from the consumer's
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
	seed := e2etest.PropertySeed(t, "wire.consumer.seed", *consumerSeed)
	for i := range consumerWorlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			w := newConsumerWorld(t)
			grant, granted := w.RobinSupport.Id, true
			acked := w.Consumer(t, w.Robin, "main", http.StatusCreated).AckedSeq
			processed := map[int64]bool{}
			var pending []int64 // delivered, processed, not acknowledged
			for step := range 40 {
				switch k := r.IntN(10); {
				case k < 5:
					thread := w.TicketThread
					if r.IntN(3) == 0 {
						thread = w.CampaignThread
					}
					w.Post(t, w.Alex, thread, fmt.Sprintf("Step %d", step))
				case k < 6:
					if granted {
						w.Revoke(t, grant)
					} else {
						grant = w.Grant(t, w.Robin, "space", w.Support, "viewer")
					}
					granted = !granted
				default:
					want := w.RestSeqs(t, w.Robin, acked)
					for _, s := range pending {
						if s > acked && !slices.Contains(want, s) && granted {
							t.Fatalf("step %d: event %d was delivered, not acknowledged, and is not delivered again while Robin reads Support", step, s)
						}
					}
					session := w.RestSession
					switch r.IntN(3) {
					case 0:
						session = w.GatewaySession
					case 1:
						session = w.ReadAheadSession
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
					if c := w.Consumer(t, w.Robin, "main", http.StatusOK); c.AckedSeq != acked {
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
			rest := w.RestSeqs(t, w.Robin, acked)
			if drained := w.DrainConsumer(t, w.Robin, "main"); !slices.Equal(drained, rest) {
				t.Fatalf("the final drain delivered %v, listEvents %v", drained, rest)
			}
			if c := w.Consumer(t, w.Robin, "main", http.StatusOK); c.AckedSeq != w.Head(t) {
				t.Fatalf("after the drain acked_seq %d, head %d", c.AckedSeq, w.Head(t))
			}
		})
	}
}
