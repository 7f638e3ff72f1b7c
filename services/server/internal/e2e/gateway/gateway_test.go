package wire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The gateway's integration tests drive the wired App over real WebSockets on real HTTP
// (httptest on 127.0.0.1) against PostgreSQL, and compare what a connection gets with what
// the REST API answers the same actor.

// gwFrame is a server frame of the gateway, decoded.
type gwFrame struct {
	Op       string          `json:"op"`
	Cursor   int64           `json:"cursor"`
	Event    json.RawMessage `json:"event"`
	Snapshot json.RawMessage `json:"snapshot"`
	Code     string          `json:"code"`
	Reason   string          `json:"reason"`
	raw      []byte
}

// gwEnvelope is what the tests read of an event envelope.
type gwEnvelope struct {
	Seq       int64     `json:"seq"`
	Type      string    `json:"type"`
	ChannelID uuid.UUID `json:"channel_id"`
}

func (f gwFrame) envelope(t *testing.T) gwEnvelope {
	t.Helper()
	var e gwEnvelope
	if err := json.Unmarshal(f.Event, &e); err != nil {
		t.Fatalf("event frame %s: %v", f.raw, err)
	}
	return e
}

// gwClient is one WebSocket connection to a gateway.
type gwClient struct {
	t    *testing.T
	conn *websocket.Conn
}

// gatewayURL turns a server's base URL (http://host:port) into the gateway's.
func gatewayURL(base string) string {
	return "ws" + strings.TrimPrefix(base, "http") + gateway.Path
}

// gwRefusal is the status and headers of an upgrade the server refused (0 when there was
// no response).
type gwRefusal struct {
	status int
	header http.Header
}

// dialGateway connects to the gateway at base with the token in the Authorization header
// (none when empty) and the header pairs given.
func dialGateway(t *testing.T, base, token string, header ...string) (*gwClient, gwRefusal, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, gatewayURL(base), &websocket.DialOptions{HTTPHeader: h})
	var r gwRefusal
	if resp != nil {
		r = gwRefusal{status: resp.StatusCode, header: resp.Header}
		if resp.Body != nil { // the library keeps the first KiB of a refusal
			_ = resp.Body.Close()
		}
	}
	if err != nil {
		return nil, r, err
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &gwClient{t: t, conn: conn}, r, nil
}

// mustDial is dialGateway that fails the test when the upgrade is refused.
func mustDial(t *testing.T, base, token string) *gwClient {
	t.Helper()
	c, refused, err := dialGateway(t, base, token)
	if err != nil {
		t.Fatalf("dial the gateway: %v (status %d)", err, refused.status)
	}
	return c
}

func (c *gwClient) send(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("send %s: %v", s, err)
	}
}

func (c *gwClient) read() (gwFrame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		return gwFrame{}, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil || hasNull(v) {
		c.t.Errorf("frame %s is no JSON without null (%v)", data, err)
	}
	// Every frame a test reads is held to api/gateway.asyncapi.yaml, as every REST response
	// is to api/openapi.yaml.
	if err := wiretest.ValidateServerFrame(data); err != nil {
		c.t.Errorf("frame %s breaks the AsyncAPI document: %v", data, err)
	}
	var f gwFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("frame %s: %v", data, err)
	}
	f.raw = data
	return f, nil
}

func (c *gwClient) next() gwFrame {
	c.t.Helper()
	f, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func (c *gwClient) expect(op string) gwFrame {
	c.t.Helper()
	f := c.next()
	if f.Op != op {
		c.t.Fatalf("frame %s, want op %s", f.raw, op)
	}
	return f
}

// until reads frames until the client's cursor reaches through (and, with complete, until
// catchup.complete came), and returns the envelopes of the event frames and the number of
// catchup.complete frames.
func (c *gwClient) until(through int64, complete bool) ([]gwEnvelope, int) {
	c.t.Helper()
	var got []gwEnvelope
	completes := 0
	for cursor := int64(-1); cursor < through || complete && completes == 0; {
		f := c.next()
		switch f.Op {
		case "event":
			e := f.envelope(c.t)
			got = append(got, e)
			cursor = e.Seq
		case "cursor":
			cursor = f.Cursor
		case "catchup.complete":
			completes++
			cursor = f.Cursor
		case "heartbeat":
		default:
			c.t.Fatalf("frame %s while reading through %d", f.raw, through)
		}
	}
	return got, completes
}

// closed reads until the server closes and returns the close code; it returns the events it
// read before too.
func (c *gwClient) closed() (websocket.StatusCode, []gwEnvelope) {
	c.t.Helper()
	var got []gwEnvelope
	for {
		f, err := c.read()
		if err != nil {
			return websocket.CloseStatus(err), got
		}
		if f.Op == "event" {
			got = append(got, f.envelope(c.t))
		}
	}
}

// hasNull reports whether a decoded JSON value holds a null anywhere.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func gwSeqs(envs []gwEnvelope) []int64 {
	out := make([]int64, len(envs))
	for i, e := range envs {
		out[i] = e.Seq
	}
	return out
}

// restEvents pages through listEvents as a from after to head, as a REST client does, and
// returns the seqs.
func (w *chatWorld) restEvents(t *testing.T, a worldActor, after, head int64) []int64 {
	t.Helper()
	var out []int64
	for after < head {
		var page struct {
			Events     []gwEnvelope `json:"events"`
			NextCursor int64        `json:"next_cursor"`
		}
		w.must(t, a, http.MethodGet, fmt.Sprintf("/api/v1/events?after=%d", after), "", http.StatusOK, &page)
		for _, e := range page.Events {
			if e.Seq <= head {
				out = append(out, e.Seq)
			}
		}
		if page.NextCursor <= after {
			t.Fatalf("listEvents after %d did not advance (next_cursor %d)", after, page.NextCursor)
		}
		after = page.NextCursor
	}
	return out
}

// serveLive runs the tail of w's App, so its gateway delivers live events, and has the gateway
// close its connections when the test ends, before the server and the App stop.
func serveLive(t *testing.T, w *chatWorld) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := w.env.App.Gateway().Shutdown(ctx); err != nil {
			t.Errorf("gateway shutdown: %v", err)
		}
	})
	runTail(t, w.env.App.Tail())
}

// gatewayWorld is a chatWorld whose App's tail runs, so its gateway delivers live events,
// and whose gateway closes its connections before the server and the App stop.
func gatewayWorld(t *testing.T, opts ...wiretest.Option) *chatWorld {
	t.Helper()
	w := newChatWorld(t, false, opts...)
	serveLive(t, w)
	return w
}

// poster posts messages as Alex from a goroutine (t.Fatal may not be called there); it
// reports the first failure on done.
func (w *chatWorld) poster(threads []uuid.UUID, n int) <-chan error {
	done := make(chan error, 1)
	client := w.env.Server.Client()
	go func() {
		defer close(done)
		for i := range n {
			body := fmt.Sprintf(`{"content_md":"Update %d from Alex"}`, i)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
				w.env.Server.URL+"/api/v1/threads/"+threads[i%len(threads)].String()+"/messages", strings.NewReader(body))
			if err != nil {
				done <- err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+w.alex.token)
			resp, err := client.Do(req)
			if err != nil {
				done <- err
				return
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				done <- fmt.Errorf("post %d: status %d", i, resp.StatusCode)
				return
			}
		}
	}()
	return done
}

// TestGatewayResumeEqualsRESTCatchUp resumes Sam from every cursor of the log while Alex
// keeps posting: each connection's events, catch-up and live, are exactly what listEvents
// gives Sam from that cursor (same events, same order, nothing twice), with one
// catchup.complete between.
func TestGatewayResumeEqualsRESTCatchUp(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	head := w.head(t)
	writing := w.poster([]uuid.UUID{w.ticketThread, w.campaignThread}, 20)
	clients := make([]*gwClient, head+1)
	for after := range head + 1 {
		c := mustDial(t, w.env.Server.URL, w.sam.token)
		c.send(fmt.Sprintf(`{"op":"resume","after":%d}`, after))
		clients[after] = c
	}
	if err := <-writing; err != nil {
		t.Fatalf("poster: %v", err)
	}
	final := w.head(t)
	want := w.restEvents(t, w.sam, 0, final)
	if len(want) < 20 {
		t.Fatalf("REST catch-up gave Sam %d events, want at least the 20 posts", len(want))
	}
	for after, c := range clients {
		got, completes := c.until(final, true)
		wantFrom := slices.DeleteFunc(slices.Clone(want), func(s int64) bool { return s <= int64(after) })
		if !slices.Equal(gwSeqs(got), wantFrom) {
			t.Errorf("resume after %d: gateway %v, listEvents %v", after, gwSeqs(got), wantFrom)
		}
		if completes != 1 {
			t.Errorf("resume after %d: %d catchup.complete frames", after, completes)
		}
	}
}

// TestGatewayReadyIsTheSnapshot: the ready frame carries the body of getSnapshot.
func TestGatewayReadyIsTheSnapshot(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	var rest any
	w.must(t, w.sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, &rest)
	c := mustDial(t, w.env.Server.URL, w.sam.token)
	c.send(`{"op":"hello"}`)
	var ws any
	if err := json.Unmarshal(c.expect("ready").Snapshot, &ws); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if !reflect.DeepEqual(ws, rest) {
		t.Errorf("ready snapshot %v\ndiffers from getSnapshot %v", ws, rest)
	}
	// Then live events after its head.
	m := w.post(t, w.alex, w.ticketThread, "Live for Sam")
	got, _ := c.until(w.head(t), false)
	if len(got) != 1 || got[0].Type != "message.created" {
		t.Errorf("live events %+v, want the message %s", got, m.Id)
	}
}

// TestGatewayRevokeWhileConnected: once Alex revoked Sam's grant on Marketing, no event of
// its channel reaches Sam's connection, while Support's still do.
func TestGatewayRevokeWhileConnected(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	c := mustDial(t, w.env.Server.URL, w.sam.token)
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	w.post(t, w.alex, w.campaignThread, "Before the revoke")

	var grants apigen.GrantList
	w.must(t, w.alex, http.MethodGet, "/api/v1/grants?principal_id="+w.sam.id.String(), "", http.StatusOK, &grants)
	var marketing uuid.UUID
	for _, g := range grants.Items {
		if g.ResourceId != nil && *g.ResourceId == w.marketing {
			marketing = g.Id
		}
	}
	if marketing == uuid.Nil {
		t.Fatalf("no grant of Sam on Marketing in %+v", grants.Items)
	}
	w.must(t, w.alex, http.MethodDelete, "/api/v1/grants/"+marketing.String(), "", http.StatusNoContent, nil)
	revokedAt := w.head(t)
	for i := range 3 {
		w.post(t, w.alex, w.campaignThread, fmt.Sprintf("Hidden from Sam %d", i))
		w.post(t, w.alex, w.ticketThread, fmt.Sprintf("Seen by Sam %d", i))
	}
	got, _ := c.until(w.head(t), false)
	var after []gwEnvelope
	sawRevoke := false
	for _, e := range got {
		if e.Type == "permissions.changed" {
			sawRevoke = true
		}
		if e.Seq > revokedAt {
			after = append(after, e)
		}
	}
	if !sawRevoke {
		t.Errorf("no permissions.changed among %+v", got)
	}
	if len(after) != 3 {
		t.Errorf("after the revoke Sam got %+v, want the 3 posts in Support", after)
	}
	for _, e := range after {
		if e.ChannelID != w.tickets {
			t.Errorf("after the revoke Sam got %+v", e)
		}
	}
}

func TestGatewayRefusalsThroughTheRouter(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	for _, tc := range []struct {
		name   string
		token  string
		header []string
		status int
	}{
		{"bad token", "nobody", nil, http.StatusUnauthorized},
		{"cross-site page", w.sam.token, []string{"Origin", "https://elsewhere.example.com"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := dialGateway(t, w.env.Server.URL, tc.token, tc.header...)
			if err == nil {
				t.Fatal("the upgrade was accepted")
			}
			if resp.status != tc.status || resp.header.Get("X-Request-Id") == "" {
				t.Errorf("response %+v, want status %d with a request id", resp, tc.status)
			}
		})
	}
	// A browser's auth frame works as the header does.
	c := mustDial(t, w.env.Server.URL, "")
	c.send(`{"op":"auth","token":"` + w.robin.token + `"}`)
	c.send(`{"op":"hello"}`)
	c.expect("ready")
}

// TestGatewayRoles: a process with the gateway role alone serves the gateway and the
// operational endpoints, not the API; one with the api role alone serves no gateway.
func TestGatewayRoles(t *testing.T) {
	t.Parallel()
	w := newPeople(t, false)
	url := w.env.DatabaseURL
	cfg := loadConfig(t, map[config.Key]string{config.DatabaseURL: url})
	build := func(roles ...string) *wire.App {
		app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Roles: roles, Clock: w.env.Clock})
		if err != nil {
			t.Fatalf("New(%v): %v", roles, err)
		}
		t.Cleanup(app.Close)
		return app
	}
	gw := build(wire.RoleGateway)
	if !gw.ServesHTTP() || gw.Gateway() == nil {
		t.Fatal("a gateway process serves no gateway")
	}
	base, stop, done := serving(t, gw)
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/api/v1/me": http.StatusNotFound} {
		resp, err := get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on a gateway process = %d, want %d", path, resp.StatusCode, want)
		}
	}
	c := mustDial(t, base, w.sam.token)
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	stop()
	if code, _ := c.closed(); code != gateway.CloseGoingAway {
		t.Errorf("close %d on shutdown, want %d", code, gateway.CloseGoingAway)
	}
	if err := waitServe(t, done, waitTimeout); err != nil {
		t.Errorf("Serve: %v", err)
	}

	api := build(wire.RoleAPI)
	if api.Gateway() != nil {
		t.Error("an api process has a gateway")
	}
	srv := serveHandler(t, api)
	_, resp, err := dialGateway(t, srv, w.sam.token)
	if err == nil || resp.status != http.StatusNotFound {
		t.Errorf("the gateway of an api process: %v %v, want 404", err, resp)
	}
	if maintenance := build(wire.RoleMaintenance); maintenance.ServesHTTP() {
		t.Error("a maintenance process serves HTTP")
	}
}

// serveHandler serves app.Handler on 127.0.0.1 until the test ends and returns its base URL.
func serveHandler(t *testing.T, app *wire.App) string {
	t.Helper()
	base, _, _ := serving(t, app)
	return base
}

// TestGatewayServeClosesWithGoingAway: when Serve's context ends (SIGTERM), every connection
// gets 1001 after the frames in flight, and resumes elsewhere from its cursor without loss.
func TestGatewayServeClosesWithGoingAway(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	cfg := loadConfig(t, map[config.Key]string{config.DatabaseURL: w.env.DatabaseURL})
	app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Roles: []string{wire.RoleGateway}, Clock: w.env.Clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	base, stop, done := serving(t, app)
	c := mustDial(t, base, w.sam.token)
	c.send(`{"op":"resume","after":0}`)
	got, _ := c.until(w.head(t), true)
	m := w.post(t, w.alex, w.ticketThread, "Just before the signal")
	stop()
	code, more := c.closed()
	if code != gateway.CloseGoingAway {
		t.Errorf("close %d, want %d", code, gateway.CloseGoingAway)
	}
	if err := waitServe(t, done, waitTimeout); err != nil {
		t.Errorf("Serve: %v", err)
	}
	got = append(got, more...)
	cursor := gwSeqs(got)[len(got)-1]

	// The client resumes on another process (the test's App) from its cursor.
	runTail(t, w.env.App.Tail())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_ = w.env.App.Gateway().Shutdown(ctx)
	})
	again := mustDial(t, w.env.Server.URL, w.sam.token)
	again.send(fmt.Sprintf(`{"op":"resume","after":%d}`, cursor))
	rest, _ := again.until(w.head(t), true)
	got = append(got, rest...)
	if want := w.restEvents(t, w.sam, 0, w.head(t)); !slices.Equal(gwSeqs(got), want) {
		t.Errorf("across the shutdown Sam got %v, want %v (message %s)", gwSeqs(got), want, m.Id)
	}
}

// TestGatewayResumeEpochLikeREST: the resume frame's epoch is judged as listEvents' epoch
// parameter is, by the one rule of Check: the nil UUID and any other well-formed epoch that
// is not the instance's get resync_required epoch_changed (recovery snapshot) and close 4004,
// as listEvents answers them 410; a malformed one is a bad frame (4000), as listEvents
// answers it 400 validation_failed; the current epoch resumes.
func TestGatewayResumeEpochLikeREST(t *testing.T) {
	t.Parallel()
	w := gatewayWorld(t)
	head := w.head(t)
	for _, epoch := range []string{uuid.Nil.String(), uuid.NewString()} {
		r := w.do(t, w.sam, http.MethodGet, eventsPath(head, 0, epoch), "")
		r.RequireProblem(t, http.StatusGone, "resync_required")
		var g goneBody
		r.JSON(t, &g)
		if g.Reason != "epoch_changed" || g.Recovery != "snapshot" {
			t.Fatalf("listEvents with epoch %s: %s", epoch, r.Body)
		}
		c := mustDial(t, w.env.Server.URL, w.sam.token)
		c.send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, epoch))
		var f struct {
			Op       string `json:"op"`
			Reason   string `json:"reason"`
			Recovery string `json:"recovery"`
		}
		if err := json.Unmarshal(c.expect("resync_required").raw, &f); err != nil || f.Reason != "epoch_changed" || f.Recovery != "snapshot" {
			t.Fatalf("resume with epoch %s: %+v (%v)", epoch, f, err)
		}
		if code, _ := c.closed(); code != gateway.CloseResyncRequired {
			t.Fatalf("resume with epoch %s: close %d, want %d", epoch, code, gateway.CloseResyncRequired)
		}
	}

	const malformed = "not-a-uuid"
	w.do(t, w.sam, http.MethodGet, eventsPath(head, 0, malformed), "").RequireProblem(t, http.StatusBadRequest, "validation_failed")
	c := mustDial(t, w.env.Server.URL, w.sam.token)
	c.send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, malformed))
	if code, _ := c.closed(); code != gateway.CloseBadFrame {
		t.Fatalf("resume with a malformed epoch: close %d, want %d", code, gateway.CloseBadFrame)
	}

	current := mustDial(t, w.env.Server.URL, w.sam.token)
	current.send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, head, w.epoch(t)))
	if f := current.expect("catchup.complete"); f.Cursor != head {
		t.Fatalf("resume with the current epoch: catchup.complete at %d, want %d", f.Cursor, head)
	}
}
