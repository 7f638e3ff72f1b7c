package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// waitTimeout bounds every wait of these tests; nothing waits for a fixed time.
const waitTimeout = 20 * time.Second

// testConfig is a valid configuration whose timeouts no test reaches by accident.
func testConfig() gateway.Config {
	return gateway.Config{
		SendBuffer:        64,
		HeartbeatInterval: time.Hour,
		AuthTimeout:       waitTimeout,
		WriteTimeout:      waitTimeout,
		MaxFrameBytes:     4096,
		// RevocationMaxDelay paces the expiry sweeper; the tests of expiry set it short.
		RevocationMaxDelay: time.Minute,
		// CredentialRecheckInterval paces the batched re-validation; its tests set it short.
		CredentialRecheckInterval: time.Minute,
	}
}

// env is a Gateway over fakes and the real sync use cases it is wired to in production
// (CatchUp, Delivery, Tail), served by an httptest server on 127.0.0.1.
type env struct {
	log       *fakeLog
	authz     *fakeAuthz
	dir       *fakeDirectory
	auth      *fakeAuthenticator
	creds     *fakeCredentials
	failed    *fakeFailedAuth
	beats     *fakeHeartbeats
	snapshot  *fakeSnapshot
	listener  *fakeListener
	tail      *syncapp.Tail
	catchUp   *syncapp.CatchUp
	gw        *gateway.Gateway
	srv       *httptest.Server
	logs      *logSpy
	stopTail  context.CancelFunc
	tailEnded chan struct{}
}

// envOption changes an env before it is built.
type envOption func(*envSettings)

type envSettings struct {
	cfg          gateway.Config
	tailBatch    int
	pageSize     int
	startTail    bool
	snapshotFail error
	wrapConn     func(net.Conn) net.Conn
	clock        clock.Clock
}

// withClock gives the gateway the clock it checks tokens' expiry against (Deps.Clock).
func withClock(c clock.Clock) envOption { return func(s *envSettings) { s.clock = c } }

// withServerConns wraps every connection the test server accepts (to watch the gateway's
// writes to its sockets).
func withServerConns(wrap func(net.Conn) net.Conn) envOption {
	return func(s *envSettings) { s.wrapConn = wrap }
}

// wrappingListener wraps the connections of a listener.
type wrappingListener struct {
	net.Listener
	wrap func(net.Conn) net.Conn
}

func (l wrappingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.wrap(c), nil
}

func withConfig(fn func(*gateway.Config)) envOption {
	return func(s *envSettings) { fn(&s.cfg) }
}

func withTailBatch(n int) envOption { return func(s *envSettings) { s.tailBatch = n } }

func withPageSize(n int) envOption { return func(s *envSettings) { s.pageSize = n } }

// withTailStopped leaves the tail not running; the test starts it with startTail.
func withTailStopped() envOption { return func(s *envSettings) { s.startTail = false } }

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	s := envSettings{cfg: testConfig(), tailBatch: 100, pageSize: 50, startTail: true}
	for _, o := range opts {
		o(&s)
	}
	e := &env{
		log:      &fakeLog{epoch: epoch},
		authz:    newFakeAuthz(),
		dir:      &fakeDirectory{},
		auth:     &fakeAuthenticator{},
		creds:    &fakeCredentials{},
		failed:   &fakeFailedAuth{},
		beats:    &fakeHeartbeats{},
		listener: &fakeListener{heads: make(chan int64, 1000)},
		logs:     &logSpy{},
	}
	e.snapshot = &fakeSnapshot{log: e.log, fail: s.snapshotFail}
	logger := logging.New(e.logs, slog.LevelDebug)
	var err error
	e.tail, err = syncapp.NewTail(e.log, e.log, e.listener, syncapp.TailConfig{
		PollInterval: time.Hour, BatchSize: s.tailBatch, Logger: logger,
	})
	if err != nil {
		t.Fatalf("NewTail: %v", err)
	}
	e.catchUp, err = syncapp.NewCatchUp(syncapp.CatchUpDeps{
		Log: e.log, Versions: e.log, Authorizer: e.authz, Directory: e.dir,
		Config: syncapp.CatchUpConfig{PageSize: s.pageSize, ScanWindow: 1000, MaxEvents: 100_000, RetryBase: time.Second},
	})
	if err != nil {
		t.Fatalf("NewCatchUp: %v", err)
	}
	delivery, err := syncapp.NewDelivery(e.authz, e.dir)
	if err != nil {
		t.Fatalf("NewDelivery: %v", err)
	}
	e.gw, err = gateway.New(gateway.Deps{
		Authenticator:   e.auth,
		Credentials:     e.creds,
		FailedAuth:      e.failed,
		Authorizer:      e.authz,
		CatchUp:         e.catchUp,
		Snapshot:        e.snapshot,
		SnapshotEncoder: gateway.SnapshotEncoderFunc(encodeSnapshot),
		Tail:            e.tail,
		Delivery:        delivery,
		Heartbeats:      e.beats,
		Config:          s.cfg,
		Logger:          logger,
		Clock:           s.clock,
	})
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+gateway.Path, e.gw)
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(logging.With(r.Context(), logger)))
	}))
	if s.wrapConn != nil {
		e.srv.Listener = wrappingListener{Listener: e.srv.Listener, wrap: s.wrapConn}
	}
	e.srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := e.gw.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		e.srv.Close()
		if e.stopTail != nil {
			e.stopTail()
			<-e.tailEnded
		}
	})
	if s.startTail {
		e.startTail(t)
	}
	return e
}

// startTail runs the tail until the test ends and waits until it has read its start.
func (e *env) startTail(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.stopTail, e.tailEnded = cancel, make(chan struct{})
	go func() {
		defer close(e.tailEnded)
		if err := e.tail.Run(ctx); err != nil {
			t.Errorf("tail: %v", err)
		}
	}()
	select {
	case <-e.tail.Ready():
	case <-time.After(waitTimeout):
		t.Fatal("the tail never started")
	}
}

// append writes events to the log and wakes the tail, as a commit's NOTIFY does.
func (e *env) append(events ...domain.StoredEvent) []domain.StoredEvent {
	out := e.log.add(events...)
	e.listener.heads <- e.log.lastSeq()
	return out
}

// url is the gateway's WebSocket URL.
func (e *env) url() string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + gateway.Path
}

// frame is any server frame, decoded.
type frame struct {
	Op           string          `json:"op"`
	Cursor       int64           `json:"cursor"`
	Event        json.RawMessage `json:"event"`
	Snapshot     json.RawMessage `json:"snapshot"`
	Code         string          `json:"code"`
	Detail       string          `json:"detail"`
	Reason       string          `json:"reason"`
	Recovery     string          `json:"recovery"`
	RetryAfterMS *int64          `json:"retry_after_ms"`
	HeadSeq      *int64          `json:"head_seq"`
	SyncEpoch    string          `json:"sync_epoch"`
	OldestSeq    *int64          `json:"oldest_seq"`
	raw          []byte
}

// seq is the seq of an event frame's envelope.
func (f frame) seq(t *testing.T) int64 {
	t.Helper()
	var env struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(f.Event, &env); err != nil {
		t.Fatalf("event frame %s: %v", f.raw, err)
	}
	return env.Seq
}

// client is one WebSocket connection of a test.
type client struct {
	t    *testing.T
	conn *websocket.Conn
}

// dial connects with the header pairs given (name, value, ...) and fails the test when the
// upgrade is refused.
func (e *env) dial(t *testing.T, header ...string) *client {
	t.Helper()
	c, refused, err := e.tryDial(t, nil, header...)
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, refused)
	}
	return c
}

// dialAs connects with the principal's token in the Authorization header.
func (e *env) dialAs(t *testing.T, token string) *client {
	t.Helper()
	return e.dial(t, "Authorization", "Bearer "+token)
}

// refusal is the response to an upgrade the server refused.
type refusal struct {
	status int
	header http.Header
	body   []byte
}

// tryDial connects and returns the refusal when the upgrade is refused.
func (e *env) tryDial(t *testing.T, opts *websocket.DialOptions, header ...string) (*client, refusal, error) {
	t.Helper()
	if opts == nil {
		opts = &websocket.DialOptions{}
	}
	opts.HTTPHeader = http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		opts.HTTPHeader.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, e.url(), opts)
	var r refusal
	if resp != nil {
		r.status, r.header = resp.StatusCode, resp.Header
		if resp.Body != nil { // the library keeps the first KiB of a refusal
			r.body, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
	}
	if err != nil {
		return nil, r, err
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &client{t: t, conn: conn}, r, nil
}

// send writes a text frame.
func (c *client) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("send %s: %v", s, err)
	}
}

// next reads the next frame; it fails the test when the connection closes first.
func (c *client) next() frame {
	c.t.Helper()
	f, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func (c *client) read() (frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	typ, data, err := c.conn.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	if typ != websocket.MessageText {
		return frame{}, errors.New("a binary frame")
	}
	if bytes.Contains(data, []byte("null")) {
		c.t.Errorf("frame with null: %s", data)
	}
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("frame %s: %v", data, err)
	}
	f.raw = data
	return f, nil
}

// expect reads the next frame and fails unless its op is op.
func (c *client) expect(op string) frame {
	c.t.Helper()
	f := c.next()
	if f.Op != op {
		c.t.Fatalf("frame %s, want op %s", f.raw, op)
	}
	return f
}

// closed reads until the server closes and returns the close code, failing when a frame
// other than those of skip arrives first.
func (c *client) closed(skip ...string) websocket.StatusCode {
	c.t.Helper()
	for {
		f, err := c.read()
		if err != nil {
			return websocket.CloseStatus(err)
		}
		if !containsOp(skip, f.Op) {
			c.t.Fatalf("frame %s before the close", f.raw)
		}
	}
}

func containsOp(ops []string, op string) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// events reads frames until it has seen an event or cursor covering through, and returns
// the seqs of the event frames; it fails on any other frame except heartbeats.
func (c *client) events(through int64) []int64 {
	c.t.Helper()
	var seqs []int64
	cursor := int64(-1)
	for cursor < through {
		f := c.next()
		switch f.Op {
		case "event":
			s := f.seq(c.t)
			seqs = append(seqs, s)
			cursor = s
		case "cursor", "catchup.complete":
			cursor = f.Cursor
		case "heartbeat":
		default:
			c.t.Fatalf("frame %s while waiting for events through %d", f.raw, through)
		}
	}
	return seqs
}

// logSpy collects log lines and lets a test wait for one.
type logSpy struct {
	mu    gosync.Mutex
	buf   bytes.Buffer
	added chan struct{}
}

func (s *logSpy) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if s.added != nil {
		close(s.added)
		s.added = nil
	}
	return len(p), nil
}

// String returns every line logged so far.
func (s *logSpy) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *logSpy) contains(msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.buf.String(), msg)
}
