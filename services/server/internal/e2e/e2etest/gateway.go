package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wiretest"
)

// The gateway's integration tests drive the wired App over real WebSockets on real HTTP
// (httptest on 127.0.0.1) against PostgreSQL, and compare what a connection gets with what
// the REST API answers the same actor.

// GatewayFrame is a server frame of the gateway, decoded.
type GatewayFrame struct {
	Op       string          `json:"op"`
	Cursor   int64           `json:"cursor"`
	Event    json.RawMessage `json:"event"`
	Snapshot json.RawMessage `json:"snapshot"`
	Code     string          `json:"code"`
	Reason   string          `json:"reason"`
	// Raw is the frame as received, never decoded into.
	Raw []byte `json:"-"`
}

// GatewayEnvelope is what the tests read of an event envelope.
type GatewayEnvelope struct {
	Seq       int64     `json:"seq"`
	Type      string    `json:"type"`
	ChannelID uuid.UUID `json:"channel_id"`
}

func (f GatewayFrame) envelope(t *testing.T) GatewayEnvelope {
	t.Helper()
	var e GatewayEnvelope
	if err := json.Unmarshal(f.Event, &e); err != nil {
		t.Fatalf("event frame %s: %v", f.Raw, err)
	}
	return e
}

// GatewayClient is one WebSocket connection to a gateway.
type GatewayClient struct {
	T    *testing.T
	Conn *websocket.Conn
}

// gatewayURL turns a server's base URL (http://host:port) into the gateway's.
func gatewayURL(base string) string {
	return "ws" + strings.TrimPrefix(base, "http") + gateway.Path
}

// GatewayRefusal is the status and headers of an upgrade the server refused (0 when there was
// no response).
type GatewayRefusal struct {
	Status int
	Header http.Header
}

// DialGateway connects to the gateway at base with the token in the Authorization header
// (none when empty) and the header pairs given.
func DialGateway(t *testing.T, base, token string, header ...string) (*GatewayClient, GatewayRefusal, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(t.Context(), WaitTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, gatewayURL(base), &websocket.DialOptions{HTTPHeader: h})
	var r GatewayRefusal
	if resp != nil {
		r = GatewayRefusal{Status: resp.StatusCode, Header: resp.Header}
		if resp.Body != nil { // the library keeps the first KiB of a refusal
			_ = resp.Body.Close()
		}
	}
	if err != nil {
		return nil, r, err
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &GatewayClient{T: t, Conn: conn}, r, nil
}

// MustDial is DialGateway that fails the test when the upgrade is refused.
func MustDial(t *testing.T, base, token string) *GatewayClient {
	t.Helper()
	c, refused, err := DialGateway(t, base, token)
	if err != nil {
		t.Fatalf("dial the gateway: %v (status %d)", err, refused.Status)
	}
	return c
}

// Send writes the text frame s and fails the test when it cannot.
func (c *GatewayClient) Send(s string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	if err := c.Conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.T.Fatalf("send %s: %v", s, err)
	}
}

func (c *GatewayClient) Read() (GatewayFrame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	_, data, err := c.Conn.Read(ctx)
	if err != nil {
		return GatewayFrame{}, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil || hasNull(v) {
		c.T.Errorf("frame %s is no JSON without null (%v)", data, err)
	}
	// Every frame a test reads is held to api/gateway.asyncapi.yaml, as every REST response
	// is to api/openapi.yaml.
	if err := wiretest.ValidateServerFrame(data); err != nil {
		c.T.Errorf("frame %s breaks the AsyncAPI document: %v", data, err)
	}
	var f GatewayFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.T.Fatalf("frame %s: %v", data, err)
	}
	f.Raw = data
	return f, nil
}

// Next reads the next frame and fails the test when there is none.
func (c *GatewayClient) Next() GatewayFrame {
	c.T.Helper()
	f, err := c.Read()
	if err != nil {
		c.T.Fatalf("read: %v", err)
	}
	return f
}

// Expect reads the next frame and fails the test unless its op is op.
func (c *GatewayClient) Expect(op string) GatewayFrame {
	c.T.Helper()
	f := c.Next()
	if f.Op != op {
		c.T.Fatalf("frame %s, want op %s", f.Raw, op)
	}
	return f
}

// Until reads frames until the client's cursor reaches through (and, with complete, until
// catchup.complete came), and returns the envelopes of the event frames and the number of
// catchup.complete frames.
func (c *GatewayClient) Until(through int64, complete bool) ([]GatewayEnvelope, int) {
	c.T.Helper()
	var got []GatewayEnvelope
	completes := 0
	for cursor := int64(-1); cursor < through || complete && completes == 0; {
		f := c.Next()
		switch f.Op {
		case "event":
			e := f.envelope(c.T)
			got = append(got, e)
			cursor = e.Seq
		case "cursor":
			cursor = f.Cursor
		case "catchup.complete":
			completes++
			cursor = f.Cursor
		case "heartbeat":
		default:
			c.T.Fatalf("frame %s while reading through %d", f.Raw, through)
		}
	}
	return got, completes
}

// Closed reads until the server closes and returns the close code; it returns the events it
// read before too.
func (c *GatewayClient) Closed() (websocket.StatusCode, []GatewayEnvelope) {
	c.T.Helper()
	var got []GatewayEnvelope
	for {
		f, err := c.Read()
		if err != nil {
			return websocket.CloseStatus(err), got
		}
		if f.Op == "event" {
			got = append(got, f.envelope(c.T))
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

// GatewaySeqs lists the seqs of the envelopes, in order.
func GatewaySeqs(envs []GatewayEnvelope) []int64 {
	out := make([]int64, len(envs))
	for i, e := range envs {
		out[i] = e.Seq
	}
	return out
}

// RestEvents pages through ListEvents as a from after to head, as a REST client does, and
// returns the seqs.
func (w *ChatWorld) RestEvents(t *testing.T, a Actor, after, head int64) []int64 {
	t.Helper()
	var out []int64
	for after < head {
		var page struct {
			Events     []GatewayEnvelope `json:"events"`
			NextCursor int64             `json:"next_cursor"`
		}
		w.Must(t, a, http.MethodGet, fmt.Sprintf("/api/v1/events?after=%d", after), "", http.StatusOK, &page)
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

// ServeLive runs the tail of w's App, so its gateway delivers live events, and has the gateway
// close its connections when the test ends, before the server and the App stop.
func ServeLive(t *testing.T, w *ChatWorld) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
		defer cancel()
		if err := w.Env.App.Gateway().Shutdown(ctx); err != nil {
			t.Errorf("gateway shutdown: %v", err)
		}
	})
	RunTail(t, w.Env.App.Tail())
}

// GatewayWorld is a ChatWorld whose App's tail runs, so its gateway delivers live events,
// and whose gateway closes its connections before the server and the App stop.
func GatewayWorld(t *testing.T, opts ...wiretest.Option) *ChatWorld {
	t.Helper()
	w := NewChatWorld(t, false, opts...)
	ServeLive(t, w)
	return w
}

// Poster posts messages as Alex from a goroutine (t.Fatal may not be called there); it
// reports the first failure on done.
func (w *ChatWorld) Poster(threads []uuid.UUID, n int) <-chan error {
	done := make(chan error, 1)
	client := w.Env.Server.Client()
	go func() {
		defer close(done)
		for i := range n {
			body := fmt.Sprintf(`{"content_md":"Update %d from Alex"}`, i)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
				w.Env.Server.URL+"/api/v1/threads/"+threads[i%len(threads)].String()+"/messages", strings.NewReader(body))
			if err != nil {
				done <- err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+w.Alex.Token)
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
