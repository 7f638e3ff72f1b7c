package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"bothy.example.com/server/internal/apigen"
)

// The durable consumer tests (spec 03 "Durable consumers") drive the wired App over
// real HTTP and real WebSockets. Robin is an agent with a viewer grant on Support (the
// channel tickets); Alex posts; Sam is a person.

// ConsumerWorld is a ChatWorld whose Robin is an agent reading Support, with the tail running
// for the gateway; RobinSupport is Robin's grant.
type ConsumerWorld struct {
	*ChatWorld
	RobinSupport apigen.Grant
}

// RobinsBacklog creates Robin's consumer main and has Alex post n updates in tickets, which
// Robin may read, and n in campaigns, which he may not; it returns the consumer and what
// ListEvents gives Robin after its acked_seq: the n updates.
func (w *ConsumerWorld) RobinsBacklog(t *testing.T, n int) (apigen.Consumer, []int64) {
	t.Helper()
	c := w.Consumer(t, w.Robin, "main", http.StatusCreated)
	for i := range n {
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Update %d", i))
		w.Post(t, w.Alex, w.CampaignThread, fmt.Sprintf("Campaign %d", i))
	}
	want := w.RestSeqs(t, w.Robin, c.AckedSeq)
	if len(want) != n {
		t.Fatalf("listEvents gave Robin %v, want the %d posts in tickets", want, n)
	}
	return c, want
}

// Consumer creates (or reads) a's consumer name and checks the status.
func (w *ConsumerWorld) Consumer(t *testing.T, a Actor, name string, want int) apigen.Consumer {
	t.Helper()
	var c apigen.Consumer
	w.Must(t, a, http.MethodPut, "/api/v1/consumers/"+name, "", want, &c)
	return c
}

// Ack acknowledges seq for a's consumer name and checks the status.
func (w *ConsumerWorld) Ack(t *testing.T, a Actor, name string, seq int64, want int) apigen.Consumer {
	t.Helper()
	var c apigen.Consumer
	var out any
	if want == http.StatusOK {
		out = &c
	}
	w.Must(t, a, http.MethodPost, "/api/v1/consumers/"+name+"/ack", fmt.Sprintf(`{"seq":%d}`, seq), want, out)
	return c
}

// ConsumerPage reads one page of a's consumer name.
func (w *ConsumerWorld) ConsumerPage(t *testing.T, a Actor, name string) CatchUpPage {
	t.Helper()
	var p CatchUpPage
	r := w.Must(t, a, http.MethodGet, "/api/v1/consumers/"+name+"/events", "", http.StatusOK, &p)
	if cc := r.Header.Get("Cache-Control"); cc != SyncCacheControl {
		t.Fatalf("listConsumerEvents has Cache-Control %q, want %q", cc, SyncCacheControl)
	}
	return p
}

// ConsumerPageQuery reads one page of a's consumer name with the query (after=, limit=).
func (w *ConsumerWorld) ConsumerPageQuery(t *testing.T, a Actor, name, query string) CatchUpPage {
	t.Helper()
	var p CatchUpPage
	w.Must(t, a, http.MethodGet, "/api/v1/consumers/"+name+"/events?"+query, "", http.StatusOK, &p)
	return p
}

// RestSeqs is ListEvents as a from after to the head: the seqs delivered.
func (w *ConsumerWorld) RestSeqs(t *testing.T, a Actor, after int64) []int64 {
	t.Helper()
	return w.RestEvents(t, a, after, w.Head(t))
}

// DrainConsumer pages a's consumer until caught up, acking each page's next_cursor, and
// returns the seqs delivered.
func (w *ConsumerWorld) DrainConsumer(t *testing.T, a Actor, name string) []int64 {
	t.Helper()
	var out []int64
	for range 1000 {
		p := w.ConsumerPage(t, a, name)
		out = append(out, CatchUpSeqs(p.Events)...)
		// Acked also when the page is empty: invisible events moved next_cursor.
		w.Ack(t, a, name, p.NextCursor, http.StatusOK)
		if p.NextCursor == p.HeadSeq && len(p.Events) == 0 {
			return out
		}
	}
	t.Fatalf("consumer %s of %s never caught up", name, a.Name)
	return nil
}

// GatewayConsumerFrame is the acked frame.
type GatewayConsumerFrame struct {
	Op       string `json:"op"`
	Consumer string `json:"consumer"`
	AckedSeq int64  `json:"acked_seq"`
}

// ExpectAcked reads frames until an acked frame (skipping heartbeats and cursors).
func (c *GatewayClient) ExpectAcked() GatewayConsumerFrame {
	c.T.Helper()
	for {
		f := c.Next()
		switch f.Op {
		case "heartbeat", "cursor":
			continue
		case "acked":
			var a GatewayConsumerFrame
			if err := json.Unmarshal(f.Raw, &a); err != nil {
				c.T.Fatalf("acked frame %s: %v", f.Raw, err)
			}
			return a
		default:
			c.T.Fatalf("frame %s, want acked", f.Raw)
		}
	}
}
