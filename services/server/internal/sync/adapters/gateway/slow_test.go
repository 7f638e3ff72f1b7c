package gateway_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/sync/domain"
)

// lagged is what the gateway logs when a connection has gateway.send_buffer batches waiting
// and the hub has another for it.
const lagged = "gateway connection lagged: it catches up from its cursor"

// bigMessage is a message event with a payload of about 256 KiB, so that a peer that stops
// reading fills its socket buffers after a few dozen.
func bigMessage() domain.StoredEvent {
	e := message(help, alex)
	e.Payload = json.RawMessage(`{"pad":"` + strings.Repeat("x", 256<<10) + `"}`)
	return e
}

// reader reads a client's events in the background and reports each seq.
func reader(c *client) <-chan int64 {
	seqs := make(chan int64, 10_000)
	go func() {
		defer close(seqs)
		for {
			f, err := c.read()
			if err != nil {
				return
			}
			if f.Op == "event" {
				seqs <- f.seq(c.t)
			}
		}
	}()
	return seqs
}

// until collects seqs from ch up to and including through.
func until(t *testing.T, ch <-chan int64, through int64) []int64 {
	t.Helper()
	var out []int64
	for len(out) == 0 || out[len(out)-1] < through {
		select {
		case s, ok := <-ch:
			if !ok {
				t.Fatalf("the connection ended after %v, want events through %d", out, through)
			}
			out = append(out, s)
		case <-time.After(waitTimeout):
			t.Fatalf("no event after %v, want events through %d", out, through)
		}
	}
	return out
}

// appendUntilLagged appends big events, one batch each, paced by the healthy reader (which
// must get every one, in order, while the paused reader reads nothing), until the tail has
// dropped lags subscribers in all. It returns the events and what the healthy reader got.
func appendUntilLagged(t *testing.T, e *env, healthy <-chan int64, lags int) (appended []domain.StoredEvent, got []int64) {
	t.Helper()
	for i := 0; strings.Count(e.logs.String(), lagged) < lags; i++ {
		if i == 400 {
			t.Fatal("400 events of 256 KiB and the paused reader never lagged")
		}
		ev := e.append(bigMessage())[0]
		appended = append(appended, ev)
		got = append(got, until(t, healthy, ev.Seq)...)
	}
	return appended, got
}

// TestPausedReader: a reader that stops reading its socket costs the others nothing (they
// get every event in order while it is paused), is dropped from live delivery once it is
// gateway.send_buffer batches behind (its memory bounded by that, not by what is written),
// and when it reads again it catches up in place from its own cursor: every event, in
// order, once.
func TestPausedReader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withTailBatch(1), withConfig(func(c *gateway.Config) { c.SendBuffer = 2 }))
	healthyConn := e.dialAs(t, "sam-token")
	healthyConn.send(`{"op":"hello"}`)
	healthyConn.expect("ready")
	paused := e.dialAs(t, "sam-token")
	paused.send(`{"op":"hello"}`)
	paused.expect("ready")
	healthy := reader(healthyConn)

	big, got := appendUntilLagged(t, e, healthy, 1)
	small := e.append(message(news, alex), personal(sam), message(help, robin))
	all := append(big, small...)
	want := visibleTo(e.authz, sam, all)
	got = append(got, until(t, healthy, small[2].Seq)...)
	if !slices.Equal(got, want) {
		t.Errorf("healthy reader got %v, want %v", got, want)
	}

	if got := paused.events(small[2].Seq); !slices.Equal(got, want) {
		t.Errorf("paused reader got %v after it read again, want %v", got, want)
	}
	// It is live again.
	later := e.append(message(help, alex))
	if got := paused.events(later[0].Seq); !slices.Equal(got, []int64{later[0].Seq}) {
		t.Errorf("then live %v, want %v", got, later[0].Seq)
	}
}

// TestSlowConsumerIsClosed: a connection that lags again within a heartbeat interval of
// catching up cannot keep up, and is closed with the resumable 4005.
func TestSlowConsumerIsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withTailBatch(1), withConfig(func(c *gateway.Config) { c.SendBuffer = 2 }))
	healthyConn := e.dialAs(t, "sam-token")
	healthyConn.send(`{"op":"hello"}`)
	healthyConn.expect("ready")
	slow := e.dialAs(t, "sam-token")
	slow.send(`{"op":"hello"}`)
	slow.expect("ready")
	healthy := reader(healthyConn)

	first, _ := appendUntilLagged(t, e, healthy, 1)
	slow.events(first[len(first)-1].Seq) // caught up in place
	more, _ := appendUntilLagged(t, e, healthy, 2)
	var got []int64
	code := websocket.CloseStatus(func() error {
		for {
			f, err := slow.read()
			if err != nil {
				return err
			}
			if f.Op == "event" {
				got = append(got, f.seq(t))
			}
		}
	}())
	if code != gateway.CloseSlowConsumer {
		t.Fatalf("close %d, want %d", code, gateway.CloseSlowConsumer)
	}
	// It resumes from its cursor without loss.
	cursor := first[len(first)-1].Seq
	if len(got) > 0 {
		cursor = got[len(got)-1]
	}
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"resume","after":` + strconv.FormatInt(cursor, 10) + `}`)
	rest := c.events(more[len(more)-1].Seq)
	if want := visibleTo(e.authz, sam, more); !slices.Equal(append(got, rest...), want) {
		t.Errorf("slow consumer got %v then %v on resume, want %v", got, rest, want)
	}
}

// TestReaderThatNeverReadsIsDropped: a peer that takes no frame within
// gateway.write_timeout is disconnected, and resumes from its cursor without loss.
func TestReaderThatNeverReadsIsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withTailBatch(1), withConfig(func(c *gateway.Config) { c.WriteTimeout = 300 * time.Millisecond }))
	healthyConn := e.dialAs(t, "sam-token")
	healthyConn.send(`{"op":"hello"}`)
	healthyConn.expect("ready")
	healthy := reader(healthyConn)
	stuck := e.dialAs(t, "sam-token")
	stuck.send(`{"op":"hello"}`)
	stuck.expect("ready")
	var appended []domain.StoredEvent
	// Paced by the healthy reader: every event has gone through the process before the
	// next, until the stuck connection is gone.
	for e.gw.Connections() > 1 {
		if len(appended) == 400 {
			t.Fatal("the stuck reader was never dropped")
		}
		ev := e.append(bigMessage())[0]
		appended = append(appended, ev)
		until(t, healthy, ev.Seq)
	}
	var got []int64
	for {
		f, err := stuck.read()
		if err != nil {
			break
		}
		if f.Op == "event" {
			got = append(got, f.seq(t))
		}
	}
	var cursor int64
	if len(got) > 0 {
		cursor = got[len(got)-1]
	}
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"resume","after":` + strconv.FormatInt(cursor, 10) + `}`)
	last := appended[len(appended)-1].Seq
	if all := append(got, c.events(last)...); !slices.Equal(all, visibleTo(e.authz, sam, appended)) {
		t.Errorf("got %v, want every event once", all)
	}
}
