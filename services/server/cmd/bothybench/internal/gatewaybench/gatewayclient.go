package gatewaybench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// The benchmark's WebSocket clients, shared by the gateway and the bare broadcast server so
// both are read by the same code (wsConn, the benchmark's own minimal client): dial with a
// bearer token, send hello, read ready, then read frames continuously, counting the event
// frames (and, for the latency case, recording when each arrived). The clients of the
// latency and fan-out cases run in a client process of their own (clientProc) and publish
// their counts in memory shared with the benchmark's process (clientSlot).

const (
	// dialWorkers is how many connections are dialled (and started with hello) at once.
	dialWorkers = 32
	// dialTimeout bounds one dial with its hello and ready.
	dialTimeout = 60 * time.Second
	// clientReadLimit is the most a client keeps of a frame it keeps whole (the first event
	// frame of the fan-out case, which the bare server then writes).
	clientReadLimit = 1 << 20
	// eventKeep is how much of every other frame a client keeps: the op, and an event's seq.
	eventKeep = 64
	// helloFrame is the first frame every client sends.
	helloFrame = `{"op":"hello"}`
)

var (
	readyPrefix = []byte(`{"op":"ready"`)
	// eventPrefix starts every event frame: the envelope's first member is its seq.
	eventPrefix = []byte(`{"op":"event","event":{"seq":`)
)

// clock reads times that compare across the benchmark's processes: the wall clock read once
// at its anchor, plus the monotonic time since. (Go's monotonic readings count from each
// process's start, so they do not compare across processes; the wall clock may be slewed
// between the two processes' anchors, by microseconds at most.)
type clock struct {
	anchor time.Time
	wall   int64 // anchor's wall clock, in ns since the Unix epoch
}

// newClock anchors a clock at t (read with time.Now, so with its monotonic reading).
func newClock(t time.Time) clock { return clock{anchor: t, wall: t.UnixNano()} }

// at returns t on the clock, in ns.
func (k clock) at(t time.Time) int64 { return k.wall + int64(t.Sub(k.anchor)) }

// arrival is one event frame a recording client received: its seq and when (clock.at), and
// whether it held the client's mark (wsClient.mark).
type arrival struct {
	seq    int64
	at     int64
	marked bool
}

// clientSlot is what one client publishes while it reads, in a cache line of its own: in the
// client process's memory shared with the benchmark's process, or in the process's own.
type clientSlot struct {
	frames  atomic.Int64 // event frames received
	lastSeq atomic.Int64 // seq of the last event frame
	ended   atomic.Int64 // 1 once the connection ended on its own (a failure)
	_       [40]byte
}

// wsClient is one connection of the benchmark and its reading goroutine.
type wsClient struct {
	conn *wsConn
	slot *clientSlot

	// record keeps every arrival (the latency case), on clock.
	record   bool
	clock    clock
	arrivals []arrival // owned by the reading goroutine until done is closed
	// keepFirst keeps a copy of the first event frame (the bare server writes it).
	keepFirst bool
	first     []byte
	// mark, when set, has the client read every frame whole and note in each arrival whether
	// the frame holds it (the invocation case's delivery-only invocation_token).
	mark []byte

	closing atomic.Bool   // set before the benchmark closes the connection itself
	done    chan struct{} // closed when the reading goroutine ended
	err     error         // why reading ended, when the benchmark did not close it
}

// dialClient connects to the WebSocket at url with token as its bearer (none when empty),
// sends hello and reads frames until ready (or fails with the frame that came instead).
func dialClient(ctx context.Context, url, token string) (*wsConn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := dialWS(ctx, url, token)
	if err != nil {
		return nil, err
	}
	if err := conn.writeText([]byte(helloFrame)); err != nil {
		_ = conn.close()
		return nil, fmt.Errorf("send hello: %w", err)
	}
	// Bounded like the dial; reading goes on without a deadline.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.conn.SetReadDeadline(dl)
	}
	var buf []byte
	for {
		buf, _, err = conn.readMessage(buf, eventKeep)
		if err != nil {
			_ = conn.close()
			return nil, fmt.Errorf("wait for ready: %w", err)
		}
		if bytes.HasPrefix(buf, readyPrefix) {
			_ = conn.conn.SetReadDeadline(time.Time{})
			return conn, nil
		}
		if !bytes.HasPrefix(buf, eventPrefix) {
			_ = conn.close()
			return nil, fmt.Errorf("wait for ready: got %.200s", buf)
		}
	}
}

// dialAll opens n connections to url, the i-th with tokens[i%len(tokens)] (or none), each
// started with hello and ready, dialWorkers at a time. On failure it closes what it opened.
func dialAll(ctx context.Context, n int, url string, tokens []string) ([]*wsConn, error) {
	conns := make([]*wsConn, n)
	var (
		next     atomic.Int64
		wg       gosync.WaitGroup
		errOnce  gosync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(dialWorkers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				token := ""
				if len(tokens) > 0 {
					token = tokens[i%len(tokens)]
				}
				c, err := dialClient(ctx, url, token)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("connection %d of %d: %w", i+1, n, err); cancel() })
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		for _, c := range conns {
			if c != nil {
				_ = c.close()
			}
		}
		return nil, firstErr
	}
	return conns, nil
}

// startClients starts a reading goroutine on each connection, with slots of the process's
// own memory; record and keepFirst apply to every client (keepFirst to the first only), and
// arrivals are on a clock anchored at base.
func startClients(conns []*wsConn, record, keepFirst bool, base time.Time) []*wsClient {
	return startClientsIn(conns, make([]clientSlot, len(conns)), record, keepFirst, nil, newClock(base))
}

// startClientsIn is startClients with the given slots (one per connection), mark (see
// wsClient.mark; nil for none) and clock.
func startClientsIn(conns []*wsConn, slots []clientSlot, record, keepFirst bool, mark []byte, k clock) []*wsClient {
	clients := make([]*wsClient, len(conns))
	for i, conn := range conns {
		c := &wsClient{conn: conn, slot: &slots[i], record: record, clock: k, keepFirst: keepFirst && i == 0, mark: mark, done: make(chan struct{})}
		clients[i] = c
		go c.read()
	}
	return clients
}

// read reads frames until the connection ends; the benchmark ends it by closing the
// connection.
func (c *wsClient) read() {
	defer close(c.done)
	buf := make([]byte, 0, eventKeep)
	for {
		keep := eventKeep
		if (c.keepFirst && c.first == nil) || c.mark != nil {
			keep = clientReadLimit
		}
		var err error
		buf, _, err = c.conn.readMessage(buf, keep)
		if err != nil {
			if !c.closing.Load() {
				c.err = err
				c.slot.ended.Store(1)
			}
			return
		}
		seq, ok := eventSeq(buf)
		if !ok {
			continue
		}
		if c.record {
			at := c.clock.at(time.Now())
			c.arrivals = append(c.arrivals, arrival{seq: seq, at: at, marked: c.mark != nil && bytes.Contains(buf, c.mark)})
		}
		if c.keepFirst && c.first == nil {
			c.first = bytes.Clone(buf)
			buf = make([]byte, 0, eventKeep)
		}
		c.slot.lastSeq.Store(seq)
		c.slot.frames.Add(1)
	}
}

// eventSeq reads the seq of an event frame; false for any other frame.
func eventSeq(frame []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(frame, eventPrefix)
	if !ok {
		return 0, false
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, false
	}
	var n int64
	for _, d := range rest[:end] {
		if d < '0' || d > '9' || n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, end > 0
}

// closeClients closes every connection without a handshake and waits for the readers.
func closeClients(clients []*wsClient) {
	for _, c := range clients {
		c.closing.Store(true)
		_ = c.conn.close()
	}
	for _, c := range clients {
		<-c.done
	}
}

// clientFailure returns the error of the first client whose connection ended on its own.
func clientFailure(clients []*wsClient) error {
	for i, c := range clients {
		select {
		case <-c.done:
			if c.err != nil {
				return fmt.Errorf("connection %d ended: %w", i+1, c.err)
			}
			return fmt.Errorf("connection %d ended", i+1)
		default:
		}
	}
	return nil
}

// totalFrames sums the event frames every client received.
func totalFrames(slots []clientSlot) int64 {
	var n int64
	for i := range slots {
		n += slots[i].frames.Load()
	}
	return n
}

// slotFailure names the first client whose connection ended on its own (the client process
// tells why when it stops).
func slotFailure(slots []clientSlot) error {
	for i := range slots {
		if slots[i].ended.Load() != 0 {
			return fmt.Errorf("connection %d ended", i+1)
		}
	}
	return nil
}

// bareServer is the fan-out baseline: a minimal coder/websocket server that answers hello with
// a ready frame and then writes the same pre-encoded frame to every connection as fast as each
// connection takes it (one Write per frame, as the gateway writes), within the same window as
// the gateway's writer: a connection may be at most gwWindow transactions of gwEventsPerTx
// frames ahead of the slowest client (see pace). Without a window, 5,000 connections written
// as fast as possible fill the kernel's socket buffers until TCP memory pressure stalls every
// connection for seconds. It reads nothing after hello but control frames (CloseRead), and
// does nothing per frame but write.
type bareServer struct {
	frame []byte
	addr  string       // host:port
	stop  func() error // closes the server (serveHandler)
	limit atomic.Int64 // frames each connection may have written in all

	mu      gosync.Mutex  // guards stopped, changed and the handlers' Add
	changed chan struct{} // closed (and replaced) when limit grows or the server stops
	stopped bool
	wg      gosync.WaitGroup
}

// bareReadyFrame is the bare server's answer to hello.
const bareReadyFrame = `{"op":"ready","snapshot":{}}`

// startBareServer serves the bare broadcast server on 127.0.0.1:0; it writes nothing until
// pace raises the limit.
func startBareServer(ctx context.Context, frame []byte) (*bareServer, error) {
	b := &bareServer{frame: frame, changed: make(chan struct{})}
	addr, stop, err := bench.ServeHandler(ctx, "bare server", http.HandlerFunc(b.serve))
	if err != nil {
		return nil, err
	}
	b.addr, b.stop = addr, stop
	return b, nil
}

// url is the bare server's WebSocket address.
func (b *bareServer) url() string {
	return "ws://" + b.addr + "/"
}

func (b *bareServer) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		http.Error(w, "stopped", http.StatusServiceUnavailable)
		return
	}
	b.wg.Add(1)
	b.mu.Unlock()
	defer b.wg.Done()
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = conn.CloseNow() }()
	if _, _, err := conn.Read(r.Context()); err != nil {
		return
	}
	if err := conn.Write(r.Context(), websocket.MessageText, []byte(bareReadyFrame)); err != nil {
		return
	}
	conn.CloseRead(context.Background())
	ctx := context.Background()
	var written int64
	for {
		b.mu.Lock()
		changed, stopped := b.changed, b.stopped
		b.mu.Unlock()
		if stopped {
			return
		}
		for limit := b.limit.Load(); written < limit; written++ {
			if err := conn.Write(ctx, websocket.MessageText, b.frame); err != nil {
				return
			}
		}
		if written >= b.limit.Load() {
			<-changed
		}
	}
}

// raise lets every connection write up to limit frames in all.
func (b *bareServer) raise(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if limit > b.limit.Load() && !b.stopped {
		b.limit.Store(limit)
		close(b.changed)
		b.changed = make(chan struct{})
	}
}

// halt stops writing and refuses new connections.
func (b *bareServer) halt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.stopped = true
		close(b.changed)
	}
}

// close halts, closes the listener and waits for every handler; the clients must be closed
// (closeClients) first, so that no write blocks.
func (b *bareServer) close() error {
	b.halt()
	err := b.stop()
	b.wg.Wait()
	return err
}

// slowest returns the fewest event frames any client has received.
func slowest(slots []clientSlot) int64 {
	n := slots[0].frames.Load()
	for i := range slots[1:] {
		n = min(n, slots[i+1].frames.Load())
	}
	return n
}

// pace calls next with the frames the slowest client has received whenever that changed
// (and once at the start), every paceInterval, until stop is set, next fails, ctx ends, a
// client's connection ends, or the slowest client receives nothing for gwStallTimeout.
func pace(ctx context.Context, slots []clientSlot, stop *atomic.Bool, next func(slowest int64) error) error {
	last, progressed := int64(-1), time.Now()
	for !stop.Load() {
		s := slowest(slots)
		if s != last {
			last, progressed = s, time.Now()
			if err := next(s); err != nil {
				return err
			}
		}
		if err := slotFailure(slots); err != nil {
			return err
		}
		if time.Since(progressed) > gwStallTimeout {
			return fmt.Errorf("the slowest connection received nothing for %v", gwStallTimeout)
		}
		if !bench.SleepCtx(ctx, paceInterval) {
			return ctx.Err()
		}
	}
	return nil
}

// paceInterval is how often pace looks at the clients.
const paceInterval = 500 * time.Microsecond

// cpuTimes are the machine's CPU times from /proc/stat (Linux), in clock ticks: busy (all but
// idle and iowait) and in all.
type cpuTimes struct{ busy, total int64 }

// readCPUTimes reads the machine's CPU times; zero where /proc/stat cannot be read.
func readCPUTimes() cpuTimes {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 5 || string(fields[0]) != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	// user nice system idle iowait irq softirq steal; guest time is counted in user already.
	for i, f := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.busy += n
		}
	}
	return t
}

// busyCores returns how many of the machine's cores were busy on average between t and
// later (the machine's cores times the busy share); 0 when /proc/stat could not be read.
func (t cpuTimes) busyCores(later cpuTimes) float64 {
	if later.total <= t.total {
		return 0
	}
	return bench.Round2(float64(later.busy-t.busy) / float64(later.total-t.total) * float64(runtime.NumCPU()))
}
