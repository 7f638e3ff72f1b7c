package gateway_test

import (
	"bytes"
	"net"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/sync/domain"
)

// goroutinesIn counts the goroutines whose stack holds a frame of fn (a function name as
// runtime.Stack prints it).
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			count++
		}
	}
	return count
}

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, waitTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The functions of the gateway's goroutines as runtime.Stack names them.
const (
	readerFrame  = "gateway.(*session).read("
	writerFrame  = "gateway.(*session).work("
	beginFrame   = "gateway.(*session).begin("
	handlerFrame = "gateway.(*Gateway).serve("
)

// TestIdleConnectionHoldsOneGoroutine: once live and with nothing to write, a connection
// keeps its reader alone: no handler goroutine, no writer. A batch starts the writer, which
// delivers it and ends again.
func TestIdleConnectionHoldsOneGoroutine(t *testing.T) {
	e := newEnv(t)
	const n = 8
	conns := make([]*client, n)
	for i := range conns {
		conns[i] = e.dialAs(t, "sam-token")
		conns[i].send(`{"op":"hello"}`)
		conns[i].expect("ready")
	}
	idle := func() bool {
		return goroutinesIn(readerFrame) == n && goroutinesIn(writerFrame) == 0 &&
			goroutinesIn(beginFrame) == 0 && goroutinesIn(handlerFrame) == 0
	}
	eventually(t, "one goroutine per idle connection", idle)

	live := e.append(message(help, alex), message(news, alex))
	want := visibleTo(e.authz, sam, live)
	for _, c := range conns {
		if got := c.events(live[1].Seq); !slices.Equal(got, want) {
			t.Errorf("live seqs = %v, want %v", got, want)
		}
	}
	eventually(t, "idle again after the batch", idle)
}

// writeCounter counts the writes to a server connection once armed.
type writeCounter struct {
	net.Conn
	armed  *atomic.Bool
	writes *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	if c.armed.Load() {
		c.writes.Add(1)
	}
	return c.Conn.Write(p)
}

// TestBatchIsWrittenInOneWrite: the event frames of one tail batch reach the socket in one
// write, not one write per frame.
func TestBatchIsWrittenInOneWrite(t *testing.T) {
	t.Parallel()
	var (
		armed  atomic.Bool
		writes atomic.Int64
	)
	e := newEnv(t, withServerConns(func(c net.Conn) net.Conn {
		return writeCounter{Conn: c, armed: &armed, writes: &writes}
	}))
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready") // the writer writes nothing more until the batch

	armed.Store(true)
	batch := []domain.StoredEvent{message(help, alex), message(help, robin), personal(sam), message(news, alex), message(help, sam)}
	live := e.append(batch...)
	want := visibleTo(e.authz, sam, live)
	if len(want) < 3 {
		t.Fatalf("want several visible events, got %v", want)
	}
	if got := c.events(live[len(live)-1].Seq); !slices.Equal(got, want) {
		t.Fatalf("live seqs = %v, want %v", got, want)
	}
	if got := writes.Load(); got != 1 {
		t.Errorf("%d event frames took %d writes, want 1", len(want), got)
	}
}

// TestPanicClosesWithInternal: a panic on a connection's goroutines (no HTTP middleware
// recovers them) closes it with 1011 and an error frame, is logged, and leaves the process
// and the gateway serving.
func TestPanicClosesWithInternal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.snapshot.panic = true
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	if f := c.expect("error"); f.Code != "internal" {
		t.Errorf("frame %s", f.raw)
	}
	if code := c.closed(); code != gateway.CloseInternal {
		t.Errorf("close %d, want %d", code, gateway.CloseInternal)
	}
	if !e.logs.contains("panic in gateway connection") {
		t.Error("the panic was not logged")
	}
	eventually(t, "the connection ended", func() bool { return e.gw.Connections() == 0 })
	e.snapshot.panic = false
	c = e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
}
