package bothyapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/examples/agents/echo/agent"
)

// seen is one request the fake bothy received.
type seen struct {
	method, path, auth, key, contentType, body string
}

// fakeBothy answers every request with status and body, and records it.
func fakeBothy(t *testing.T, status int, body string) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key"), r.Header.Get("Content-Type"), string(b)})
		if status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestClientRequests: each method calls its operation with the token, the body, the
// Idempotency-Key where it has one, and decodes the answer.
func TestClientRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer string
		call   func(context.Context, *Client) (any, error)
		want   seen
		out    any
	}{
		{"me", `{"id":"a1","handle":"echo","kind":"agent"}`,
			func(ctx context.Context, c *Client) (any, error) { return c.Me(ctx) },
			seen{method: "GET", path: "/api/v1/me"}, agent.Me{ID: "a1", Handle: "echo"}},
		{"consumer", `{"name":"echo","acked_seq":7}`,
			func(ctx context.Context, c *Client) (any, error) { return c.EnsureConsumer(ctx, "echo") },
			seen{method: "PUT", path: "/api/v1/consumers/echo"}, agent.Consumer{Name: "echo", AckedSeq: 7}},
		{"events", `{"events":[{"seq":3,"id":"e","type":"invocation.requested","payload":{"id":"i"},"invocation_token":"tok","redelivered":true}],"next_cursor":4,"head_seq":5}`,
			func(ctx context.Context, c *Client) (any, error) { return c.ConsumerEvents(ctx, "echo") },
			seen{method: "GET", path: "/api/v1/consumers/echo/events"},
			agent.EventPage{Events: []agent.Event{{Seq: 3, ID: "e", Type: "invocation.requested", Payload: json.RawMessage(`{"id":"i"}`), InvocationToken: "tok", Redelivered: true}}, NextCursor: 4, HeadSeq: 5}},
		{"ack", `{"name":"echo","acked_seq":4}`,
			func(ctx context.Context, c *Client) (any, error) { return nil, c.AckConsumer(ctx, "echo", 4) },
			seen{method: "POST", path: "/api/v1/consumers/echo/ack", contentType: "application/json", body: `{"seq":4}`}, nil},
		{"delete consumer", ``,
			func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteConsumer(ctx, "echo") },
			seen{method: "DELETE", path: "/api/v1/consumers/echo"}, nil},
		{"heartbeat", `{"state":"online","last_heartbeat_at":"2026-12-01T09:30:00Z"}`,
			func(ctx context.Context, c *Client) (any, error) { return nil, c.Heartbeat(ctx) },
			seen{method: "POST", path: "/api/v1/agents/me/heartbeat", contentType: "application/json", body: `{}`}, nil},
		{"message", `{"id":"m1","thread_id":"t1","author_id":"p1","content_md":"@echo hi","redacted":false}`,
			func(ctx context.Context, c *Client) (any, error) { return c.GetMessage(ctx, "m1") },
			seen{method: "GET", path: "/api/v1/messages/m1"}, agent.Message{ID: "m1", ThreadID: "t1", AuthorID: "p1", ContentMD: "@echo hi"}},
		{"create run", `{"id":"r1","thread_id":"t1","invocation_id":"i1","state":"running"}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.CreateRun(ctx, "t1", agent.CreateRun{RequestedBy: "p1", InvocationID: "i1", State: "running"}, "echo:i1:run")
			},
			seen{method: "POST", path: "/api/v1/threads/t1/runs", key: "echo:i1:run", contentType: "application/json", body: `{"requested_by":"p1","invocation_id":"i1","state":"running"}`},
			agent.Run{ID: "r1", ThreadID: "t1", InvocationID: "i1", State: "running"}},
		{"update run", `{"id":"r1","state":"succeeded"}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateRun(ctx, "r1", agent.UpdateRun{State: "succeeded", Progress: "Replied"})
			},
			seen{method: "PATCH", path: "/api/v1/runs/r1", contentType: "application/json", body: `{"state":"succeeded","progress":"Replied"}`},
			agent.Run{ID: "r1", State: "succeeded"}},
		{"get run", `{"id":"r1","state":"failed"}`,
			func(ctx context.Context, c *Client) (any, error) { return c.GetRun(ctx, "r1") },
			seen{method: "GET", path: "/api/v1/runs/r1"}, agent.Run{ID: "r1", State: "failed"}},
		{"post reply", `{"id":"m2","thread_id":"t1","author_id":"a1","content_md":"Echo: hi"}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.PostMessage(ctx, "t1", agent.PostMessage{ContentMD: "Echo: hi", InvocationToken: "tok"}, "echo:i1:reply")
			},
			seen{method: "POST", path: "/api/v1/threads/t1/messages", key: "echo:i1:reply", contentType: "application/json", body: `{"content_md":"Echo: hi","invocation_token":"tok"}`},
			agent.Message{ID: "m2", ThreadID: "t1", AuthorID: "a1", ContentMD: "Echo: hi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, got := fakeBothy(t, http.StatusOK, tc.answer)
			c := New(srv.URL+"/", "bothy_tok", srv.Client())
			out, err := tc.call(t.Context(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			want := tc.want
			want.auth = "Bearer bothy_tok"
			if g := got(); len(g) != 1 || g[0] != want {
				t.Fatalf("requests %+v, want %+v", g, want)
			}
			if tc.out != nil {
				gb, _ := json.Marshal(out)
				wb, _ := json.Marshal(tc.out)
				if string(gb) != string(wb) {
					t.Fatalf("answer %s, want %s", gb, wb)
				}
			}
		})
	}
}

// TestClientProblems: a problem answer becomes an *agent.APIError with its status and code,
// also when its body is no problem; a network failure is no APIError.
func TestClientProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		body   string
		code   string
	}{
		{http.StatusConflict, `{"type":"about:blank","title":"Conflict","status":409,"code":"conflict","detail":"archived"}`, "conflict"},
		{http.StatusServiceUnavailable, `not json`, ""},
		{http.StatusNotFound, `{"status":500,"code":"not_found"}`, "not_found"},
	}
	for _, tc := range tests {
		srv, _ := fakeBothy(t, tc.status, tc.body)
		_, err := New(srv.URL, "bothy_tok", srv.Client()).GetMessage(t.Context(), "m1")
		var ae *agent.APIError
		if !errors.As(err, &ae) || ae.Status != tc.status || ae.Code != tc.code {
			t.Fatalf("status %d: error %v, want an APIError %d %q", tc.status, err, tc.status, tc.code)
		}
	}
	srv, _ := fakeBothy(t, http.StatusOK, `{}`)
	srv.Close()
	_, err := New(srv.URL, "bothy_tok", srv.Client()).GetMessage(t.Context(), "m1")
	var ae *agent.APIError
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("a closed server: %v, want a network error", err)
	}
}

// TestGateway: Resume dials /api/v1/gateway with the token and sends resume with the
// consumer; frames decode; Ack sends an ack frame.
func TestGateway(t *testing.T) {
	t.Parallel()
	frames := make(chan map[string]any, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/gateway" || r.Header.Get("Authorization") != "Bearer bothy_tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = conn.CloseNow() }()
		ctx := r.Context()
		for _, out := range []string{
			`{"op":"event","event":{"seq":5,"id":"e5","type":"invocation.requested","payload":{"id":"i1"},"invocation_token":"tok","redelivered":false}}`,
			`{"op":"catchup.complete","cursor":6}`,
		} {
			if err := conn.Write(ctx, websocket.MessageText, []byte(out)); err != nil {
				return
			}
		}
		for range 2 {
			_, b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var f map[string]any
			_ = json.Unmarshal(b, &f)
			frames <- f
		}
		_ = conn.Close(websocket.StatusNormalClosure, "")
	}))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := NewGateway(srv.URL, "wrong", srv.Client()).Resume(ctx, "echo"); err == nil {
		t.Fatal("a refused upgrade did not fail Resume")
	}
	s, err := NewGateway(srv.URL, "bothy_tok", srv.Client()).Resume(ctx, "echo")
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	f, err := s.Next(ctx)
	if err != nil || f.Op != "event" || f.Event.Seq != 5 || f.Event.InvocationToken != "tok" || string(f.Event.Payload) != `{"id":"i1"}` {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	if f, err := s.Next(ctx); err != nil || f.Op != "catchup.complete" || f.Cursor != 6 {
		t.Fatalf("second frame %+v, %v", f, err)
	}
	if err := s.Ack(ctx, 6); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if got := <-frames; got["op"] != "resume" || got["consumer"] != "echo" || len(got) != 2 {
		t.Fatalf("first client frame %v, want resume with the consumer only", got)
	}
	if got := <-frames; got["op"] != "ack" || got["seq"] != float64(6) {
		t.Fatalf("second client frame %v, want ack 6", got)
	}
	if _, err := s.Next(ctx); err == nil {
		t.Fatal("Next after the server closed did not fail")
	}
	_ = s.Close()
	if u := NewGateway("https://chat.example.com/", "t", nil).url; u != "wss://chat.example.com/api/v1/gateway" {
		t.Fatalf("gateway URL %q", u)
	}
}
