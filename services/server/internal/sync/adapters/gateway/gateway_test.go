package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/sync/domain"
)

func TestHelloSendsReadyThenLiveEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.append(message(help, alex), message(news, alex))
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	ready := c.expect("ready")
	var snap struct {
		HeadSeq   int64     `json:"head_seq"`
		SyncEpoch uuid.UUID `json:"sync_epoch"`
		Principal struct {
			ID uuid.UUID `json:"id"`
		} `json:"principal"`
	}
	if err := json.Unmarshal(ready.Snapshot, &snap); err != nil {
		t.Fatalf("snapshot %s: %v", ready.Snapshot, err)
	}
	if snap.HeadSeq != before[1].Seq || snap.SyncEpoch != epoch || snap.Principal.ID != sam {
		t.Errorf("snapshot = %+v, want head %d of Sam", snap, before[1].Seq)
	}

	live := e.append(message(help, alex), personal(robin), message(news, robin), personal(sam), message(help, sam))
	got := c.events(live[4].Seq)
	if want := visibleTo(e.authz, sam, live); !slices.Equal(got, want) {
		t.Errorf("live seqs = %v, want %v", got, want)
	}
}

func TestLiveEventsAreTheEnvelopesOfCatchUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.dialAs(t, "helper-token")
	agent.send(`{"op":"hello"}`)
	agent.expect("ready")
	person := e.dialAs(t, "alex-token")
	person.send(`{"op":"hello"}`)
	person.expect("ready")

	traced := message(help, sam)
	traced.TraceContext = json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)
	traced.CorrelationID = "req-1"
	stored := e.append(traced, message(help, robin))

	for _, tc := range []struct {
		c     *client
		actor actor.Actor
	}{{agent, tokens["helper-token"]}, {person, tokens["alex-token"]}} {
		page, err := e.catchUp.Page(actor.With(context.Background(), tc.actor), syncmod.PageInput{After: 0, Head: stored[1].Seq})
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		for i := range stored {
			f := tc.c.expect("event")
			if string(f.Event) != string(page.Events[i]) {
				t.Errorf("%s: live event %s, catch-up gives %s", tc.actor.Kind, f.Event, page.Events[i])
			}
		}
		if strings.Contains(string(page.Events[0]), "trace_context") != (tc.actor.Kind == actor.KindAgent) {
			t.Errorf("%s: trace_context in %s", tc.actor.Kind, page.Events[0])
		}
	}
	// The batch was named once for both connections.
	if n := e.dir.count(); n != 3 {
		t.Errorf("directory queries = %d, want 3 (1 for the live batch, 1 per Page)", n)
	}
}

// TestResumeFromEveryCursor resumes from every cursor of a stream while writers append: the
// frames each client gets, catch-up then live, are exactly what catch-up through the same
// port gives the same actor, in order, nothing twice, and catchup.complete comes once
// between them.
func TestResumeFromEveryCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPageSize(3), withTailBatch(2))
	mix := func(i int) domain.StoredEvent {
		switch i % 4 {
		case 0:
			return message(help, alex)
		case 1:
			return message(news, robin)
		case 2:
			return personal([]uuid.UUID{sam, robin}[i%3%2])
		}
		return message(help, sam)
	}
	for i := range 24 {
		e.append(mix(i))
	}
	initial := e.log.lastSeq()

	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := range 40 {
			e.append(mix(i))
		}
	}()
	clients := make([]*client, initial+1)
	for after := range initial + 1 {
		c := e.dialAs(t, "sam-token")
		c.send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, after, epoch))
		clients[after] = c
	}
	<-writer
	final := e.log.lastSeq()

	want, err := catchUpSeqs(e, tokens["sam-token"], 0, final)
	if err != nil {
		t.Fatalf("catch-up: %v", err)
	}
	for after, c := range clients {
		var got []int64
		completes := 0
		for cursor := int64(after); cursor < final || completes == 0; {
			f := c.next()
			switch f.Op {
			case "event":
				got = append(got, f.seq(t))
				cursor = got[len(got)-1]
			case "cursor":
				cursor = f.Cursor
			case "catchup.complete":
				completes++
				cursor = f.Cursor
			default:
				t.Fatalf("after %d: frame %s", after, f.raw)
			}
		}
		wantFrom := slices.DeleteFunc(slices.Clone(want), func(s int64) bool { return s <= int64(after) })
		if !slices.Equal(got, wantFrom) {
			t.Errorf("after %d: gateway %v, catch-up %v", after, got, wantFrom)
		}
		if completes != 1 {
			t.Errorf("after %d: %d catchup.complete frames, want 1", after, completes)
		}
	}
}

// catchUpSeqs pages through catch-up for the actor from after to head, as a REST client does.
func catchUpSeqs(e *env, a actor.Actor, after, head int64) ([]int64, error) {
	ctx := actor.With(context.Background(), a)
	var out []int64
	for after < head {
		page, err := e.catchUp.Page(ctx, syncmod.PageInput{After: after, Head: head})
		if err != nil {
			return nil, err
		}
		for _, ev := range page.Events {
			var env struct {
				Seq int64 `json:"seq"`
			}
			if err := json.Unmarshal(ev, &env); err != nil {
				return nil, err
			}
			out = append(out, env.Seq)
		}
		after = page.NextCursor
	}
	return out, nil
}

func TestResumePassesInvisibleRangesWithCursorFrames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPageSize(2))
	// Robin sees only his own events: pages of 2 over a window of 1000 hold them.
	for range 5 {
		e.append(message(help, alex))
	}
	own := e.append(personal(robin))
	for range 3 {
		e.append(message(news, sam))
	}
	head := e.log.lastSeq()
	c := e.dialAs(t, "robin-token")
	c.send(`{"op":"resume","after":0}`)
	if f := c.expect("event"); f.seq(t) != own[0].Seq {
		t.Errorf("event %d, want %d", f.seq(t), own[0].Seq)
	}
	if f := c.expect("catchup.complete"); f.Cursor != head {
		t.Errorf("catchup.complete %d, want the head %d", f.Cursor, head)
	}
}

func TestResumeWithACursorThatCannotBeServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.append(message(help, alex), message(help, alex), message(help, alex))
	for _, tc := range []struct {
		name, frame, reason, recovery string
	}{
		{"ahead", `{"op":"resume","after":9}`, "cursor_ahead", "retry"},
		{"another epoch", `{"op":"resume","after":1,"epoch":"0193a1c2-7c00-7a01-8000-00000000beef"}`, "epoch_changed", "snapshot"},
		{"the nil UUID as epoch", `{"op":"resume","after":1,"epoch":"00000000-0000-0000-0000-000000000000"}`, "epoch_changed", "snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dialAs(t, "sam-token")
			c.send(tc.frame)
			f := c.expect("resync_required")
			if f.Reason != tc.reason || f.Recovery != tc.recovery || f.RetryAfterMS == nil || *f.HeadSeq != 3 ||
				f.SyncEpoch != epoch.String() || f.OldestSeq == nil || *f.OldestSeq != 0 {
				t.Errorf("resync_required = %s", f.raw)
			}
			if code := c.closed(); code != gateway.CloseResyncRequired {
				t.Errorf("close %d, want %d", code, gateway.CloseResyncRequired)
			}
		})
	}
	e.log.drop(2)
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"resume","after":0}`)
	if f := c.expect("resync_required"); f.Reason != "retention" || *f.OldestSeq != 2 {
		t.Errorf("resync_required = %s", f.raw)
	}
}

// TestRevokeWhileConnected: after the revoke's permissions.changed reaches the connection,
// no event of the revoked channel does, while the channel it keeps goes on.
func TestRevokeWhileConnected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withTailBatch(3))
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	before := e.append(message(news, alex), message(help, alex))
	if got := c.events(before[1].Seq); !slices.Equal(got, []int64{before[0].Seq, before[1].Seq}) {
		t.Fatalf("before the revoke: seqs = %v", got)
	}

	version := e.authz.revoke(sam, news)
	changed := e.append(permissionsChanged(sam, version))[0]
	after := e.append(message(news, alex), message(help, alex), message(news, alex), message(help, alex))
	got := c.events(after[3].Seq)
	want := []int64{changed.Seq, after[1].Seq, after[3].Seq}
	if !slices.Equal(got, want) {
		t.Errorf("seqs = %v, want %v", got, want)
	}
}

func TestAuthFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dial(t)
	c.send(`{"op":"auth","token":"alex-token"}`)
	c.send(`{"op":"ping"}`)
	c.expect("pong")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	c.send(`{"op":"ping"}`)
	c.expect("pong")
}

func TestAuthRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		frames []string
		code   string
		close  websocket.StatusCode
	}{
		{"unknown token", []string{`{"op":"auth","token":"nobody"}`}, "unauthenticated", gateway.CloseUnauthenticated},
		{"no auth first", []string{`{"op":"hello"}`}, "unauthenticated", gateway.CloseUnauthenticated},
		{"ping first", []string{`{"op":"ping"}`}, "unauthenticated", gateway.CloseUnauthenticated},
		{"pending device", []string{`{"op":"auth","token":"pending-token"}`}, "device_pending", gateway.CloseForbidden},
		{"app without events:subscribe", []string{`{"op":"auth","token":"app-token"}`}, "forbidden", gateway.CloseForbidden},
		{"auth twice", []string{`{"op":"auth","token":"sam-token"}`, `{"op":"auth","token":"sam-token"}`}, "validation_failed", gateway.CloseBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dial(t)
			for _, f := range tc.frames {
				c.send(f)
			}
			if f := c.expect("error"); f.Code != tc.code || f.Detail == "" {
				t.Errorf("error frame %s, want code %s", f.raw, tc.code)
			}
			if code := c.closed(); code != tc.close {
				t.Errorf("close %d, want %d", code, tc.close)
			}
		})
	}
}

func TestAuthTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *gateway.Config) { c.AuthTimeout = 50 * time.Millisecond }))
	silent := e.dial(t)
	if code := silent.closed(); code != gateway.CloseAuthTimeout {
		t.Errorf("close %d, want %d", code, gateway.CloseAuthTimeout)
	}
	// Authenticated by the header, it still has to start within the timeout.
	idle := e.dialAs(t, "sam-token")
	if code := idle.closed(); code != gateway.CloseAuthTimeout {
		t.Errorf("close %d, want %d", code, gateway.CloseAuthTimeout)
	}
}

func TestUpgradeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		header []string
		status int
		code   string
	}{
		{"unknown token", []string{"Authorization", "Bearer nobody"}, http.StatusUnauthorized, "unauthenticated"},
		{"not a bearer token", []string{"Authorization", "Basic c2FtOnNhbQ=="}, http.StatusUnauthorized, "unauthenticated"},
		{"pending device", []string{"Authorization", "Bearer pending-token"}, http.StatusForbidden, "device_pending"},
		{"app without events:subscribe", []string{"Authorization", "Bearer app-token"}, http.StatusForbidden, "forbidden"},
		{"cross-site page", []string{"Authorization", "Bearer sam-token", "Origin", "https://elsewhere.example.com"}, http.StatusForbidden, "forbidden"},
		{"opaque origin", []string{"Origin", "null"}, http.StatusForbidden, "forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := e.tryDial(t, nil, tc.header...)
			if err == nil {
				t.Fatal("the upgrade was accepted")
			}
			requireProblem(t, resp, tc.status, tc.code)
		})
	}
	// A plain GET is no upgrade.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+gateway.Path, nil)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	requireProblem(t, refusal{status: resp.StatusCode, header: resp.Header, body: body}, http.StatusBadRequest, "validation_failed")
}

// TestMalformedUpgradeRefusals: what the WebSocket library would refuse with a text/plain
// answer of its own is refused by the gateway first, as a problem naming the header (spec 03,
// "Before the upgrade"), before any token is read.
func TestMalformedUpgradeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	valid := map[string]string{
		"Connection":            "Upgrade",
		"Upgrade":               "websocket",
		"Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key":     "dGhlIHNhbXBsZSBub25jZQ==",
		"Authorization":         "Bearer sam-token",
	}
	for _, tc := range []struct {
		name    string
		change  map[string]string // "" removes the header
		field   string
		version string // the Sec-WebSocket-Version the answer advertises
	}{
		{"Connection: close", map[string]string{"Connection": "close"}, "Connection", ""},
		{"no Connection", map[string]string{"Connection": ""}, "Connection", ""},
		{"no Upgrade", map[string]string{"Upgrade": ""}, "Upgrade", ""},
		{"Upgrade to something else", map[string]string{"Upgrade": "h2c"}, "Upgrade", ""},
		{"wrong version", map[string]string{"Sec-WebSocket-Version": "8"}, "Sec-WebSocket-Version", "13"},
		{"no version", map[string]string{"Sec-WebSocket-Version": ""}, "Sec-WebSocket-Version", "13"},
		{"no key", map[string]string{"Sec-WebSocket-Key": ""}, "Sec-WebSocket-Key", ""},
		{"a key of the wrong length", map[string]string{"Sec-WebSocket-Key": "c2hvcnQ="}, "Sec-WebSocket-Key", ""},
		{"a key that is no base64", map[string]string{"Sec-WebSocket-Key": "not base64 at all!"}, "Sec-WebSocket-Key", ""},
		{"an unknown token is not even read", map[string]string{"Sec-WebSocket-Key": "", "Authorization": "Bearer nobody"}, "Sec-WebSocket-Key", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+gateway.Path, nil)
			for k, v := range valid {
				req.Header.Set(k, v)
			}
			for k, v := range tc.change {
				if v == "" {
					req.Header.Del(k)
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			r := refusal{status: resp.StatusCode, header: resp.Header, body: body}
			requireProblem(t, r, http.StatusBadRequest, "validation_failed")
			var p problem.Problem
			_ = json.Unmarshal(body, &p)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Errorf("errors %+v, want one naming %s", p.Errors, tc.field)
			}
			if got := resp.Header.Get("Sec-WebSocket-Version"); got != tc.version {
				t.Errorf("Sec-WebSocket-Version %q, want %q", got, tc.version)
			}
		})
	}
	// HTTP/1.0 cannot upgrade: the same problem, naming the protocol version.
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = conn.Close() }()
	_, _ = io.WriteString(conn, "GET "+gateway.Path+" HTTP/1.0\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	requireProblem(t, refusal{status: resp.StatusCode, header: resp.Header, body: body}, http.StatusBadRequest, "validation_failed")
}

func requireProblem(t *testing.T, r refusal, status int, code string) {
	t.Helper()
	var p problem.Problem
	if err := json.Unmarshal(r.body, &p); err != nil || r.status != status || p.Code != code {
		t.Errorf("response %d %s, want %d %s", r.status, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != problem.ContentType {
		t.Errorf("content type %q", ct)
	}
}

func TestOrigins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *gateway.Config) {
		c.AllowedOrigins = []string{"https://App.example.com", "http://localhost:5173/"}
	}))
	host := strings.TrimPrefix(e.srv.URL, "http://")
	for _, origin := range []string{"", "https://app.example.com", "http://localhost:5173", "http://" + host, "https://" + host} {
		header := []string{"Authorization", "Bearer sam-token"}
		if origin != "" {
			header = append(header, "Origin", origin)
		}
		c, resp, err := e.tryDial(t, nil, header...)
		if err != nil {
			t.Errorf("origin %q refused: %v %v", origin, err, resp)
			continue
		}
		c.send(`{"op":"hello"}`)
		c.expect("ready")
	}
	for _, origin := range []string{"https://app.example.com:8443", "http://app.example.com", "https://example.com", "file://"} {
		_, resp, err := e.tryDial(t, nil, "Authorization", "Bearer sam-token", "Origin", origin)
		if err == nil {
			t.Errorf("origin %q accepted", origin)
			continue
		}
		requireProblem(t, resp, http.StatusForbidden, "forbidden")
	}
}

func TestBadFrames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *gateway.Config) { c.MaxFrameBytes = 128 }))
	for _, tc := range []struct {
		name, frame string
		field       string
	}{
		{"not JSON", `hello`, "frame"},
		{"an array", `["hello"]`, "frame"},
		{"unknown op", `{"op":"subscribe"}`, "op"},
		{"op not a string", `{"op":7}`, "op"},
		{"no op", `{"after":1}`, "op"},
		{"a member twice", `{"op":"hello","op":"ping"}`, "frame"},
		{"trailing data", `{"op":"hello"}{}`, "frame"},
		{"negative cursor", `{"op":"resume","after":-1}`, "after"},
		{"fractional cursor", `{"op":"resume","after":1.5}`, "after"},
		{"null cursor", `{"op":"resume","after":null}`, "after"},
		{"bad epoch", `{"op":"resume","after":1,"epoch":"yesterday"}`, "epoch"},
		{"hello twice", `{"op":"hello"}` + "\n" + `{"op":"hello"}`, "op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dialAs(t, "sam-token")
			for _, f := range strings.Split(tc.frame, "\n") {
				c.send(f)
			}
			f := c.next()
			if f.Op == "ready" {
				f = c.next()
			}
			if f.Op != "error" || f.Code != "validation_failed" || !strings.Contains(string(f.raw), `"field":"`+tc.field+`"`) {
				t.Errorf("frame %s, want validation_failed naming %s", f.raw, tc.field)
			}
			if code := c.closed(); code != gateway.CloseBadFrame {
				t.Errorf("close %d, want %d", code, gateway.CloseBadFrame)
			}
		})
	}
	t.Run("binary", func(t *testing.T) {
		c := e.dialAs(t, "sam-token")
		if err := c.conn.Write(t.Context(), websocket.MessageBinary, []byte(`{"op":"hello"}`)); err != nil {
			t.Fatalf("write: %v", err)
		}
		if f := c.expect("error"); f.Code != "validation_failed" {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseBadFrame {
			t.Errorf("close %d, want %d", code, gateway.CloseBadFrame)
		}
	})
	t.Run("too large", func(t *testing.T) {
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello","pad":"` + strings.Repeat("x", 200) + `"}`)
		if f := c.expect("error"); f.Code != "payload_too_large" {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseFrameTooLarge {
			t.Errorf("close %d, want %d", code, gateway.CloseFrameTooLarge)
		}
	})
	// The server goes on serving.
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello","pad":"` + strings.Repeat("x", 90) + `"}`)
	c.expect("ready")
}

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *gateway.Config) { c.HeartbeatInterval = 100 * time.Millisecond }))
	c := e.dialAs(t, "robin-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	c.expect("heartbeat")
	// Events Robin cannot see advance his cursor with the next heartbeat.
	hidden := e.append(message(help, alex), message(news, alex))
	for {
		f := c.next()
		if f.Op == "cursor" {
			if f.Cursor != hidden[1].Seq {
				t.Errorf("cursor %d, want %d", f.Cursor, hidden[1].Seq)
			}
			break
		}
		if f.Op != "heartbeat" {
			t.Fatalf("frame %s", f.raw)
		}
	}

	// A peer that reads but answers no ping is closed after two intervals.
	deaf, resp, err := e.tryDial(t, &websocket.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool { return false },
	}, "Authorization", "Bearer robin-token")
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	deaf.send(`{"op":"hello"}`)
	deaf.expect("ready")
	if code := deaf.closed("heartbeat", "cursor"); code != gateway.CloseHeartbeatTimeout {
		t.Errorf("close %d, want %d", code, gateway.CloseHeartbeatTimeout)
	}
}

func TestShutdownClosesWithGoingAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live := e.dialAs(t, "sam-token")
	live.send(`{"op":"hello"}`)
	live.expect("ready")
	waiting := e.dialAs(t, "sam-token")
	waiting.send(`{"op":"ping"}`)
	waiting.expect("pong")
	if n := e.gw.Connections(); n != 2 {
		t.Fatalf("Connections = %d, want 2", n)
	}
	stored := e.append(message(help, alex))
	live.expect("event")

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.gw.Shutdown(ctx) }()
	for _, c := range []*client{live, waiting} {
		if code := c.closed(); code != gateway.CloseGoingAway {
			t.Errorf("close %d, want %d", code, gateway.CloseGoingAway)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if n := e.gw.Connections(); n != 0 {
		t.Errorf("Connections after Shutdown = %d", n)
	}
	_, resp, err := e.tryDial(t, nil, "Authorization", "Bearer sam-token")
	if err == nil {
		t.Fatal("an upgrade after Shutdown was accepted")
	}
	requireProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
	_ = stored
}

func TestTailStoppedClosesWithGoingAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	e.stopTail()
	<-e.tailEnded
	e.stopTail = nil
	if code := c.closed(); code != gateway.CloseGoingAway {
		t.Errorf("close %d, want %d", code, gateway.CloseGoingAway)
	}
}

// TestStartWaitsForTheTail: a connection starts only once the tail knows where it starts,
// so that events committed before that are not left waiting for the next commit; nothing is
// lost or doubled. One whose tail is not ready within gateway.auth_timeout is told to come
// back later.
func TestStartWaitsForTheTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withTailStopped())
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"ping"}`)
	c.expect("pong")
	c.send(`{"op":"resume","after":0}`)
	early := e.log.add(message(help, alex), message(news, alex), personal(robin))
	e.startTail(t)
	got := c.events(early[2].Seq)
	live := e.append(message(help, alex))
	got = append(got, c.events(live[0].Seq)...)
	if want := visibleTo(e.authz, sam, append(early, live...)); !slices.Equal(got, want) {
		t.Errorf("seqs = %v, want %v", got, want)
	}

	late := newEnv(t, withTailStopped(), withConfig(func(c *gateway.Config) { c.AuthTimeout = 100 * time.Millisecond }))
	c = late.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	if f := c.expect("error"); f.Code != "unavailable" {
		t.Errorf("frame %s", f.raw)
	}
	if code := c.closed(); code != gateway.CloseTryAgainLater {
		t.Errorf("close %d, want %d", code, gateway.CloseTryAgainLater)
	}
}

// TestLiveSkipsWhatTheSnapshotHolds: events committed after the connection subscribed but
// before its snapshot read the head arrive in the snapshot and again from the tail; the
// connection skips them, so none comes twice.
func TestLiveSkipsWhatTheSnapshotHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"ping"}`)
	c.expect("pong")
	held := e.log.add(message(help, alex), message(news, alex)) // committed, the tail not woken
	c.send(`{"op":"hello"}`)
	if f := c.expect("ready"); !strings.Contains(string(f.Snapshot), fmt.Sprintf(`"head_seq":%d`, held[1].Seq)) {
		t.Fatalf("ready %s, want the head %d", f.raw, held[1].Seq)
	}
	live := e.append(message(help, alex)) // wakes the tail: one batch with held and live
	if got := c.events(live[0].Seq); !slices.Equal(got, []int64{live[0].Seq}) {
		t.Errorf("live seqs = %v, want only %d", got, live[0].Seq)
	}
}

// TestRetentionOvertakesTheTail: events retention dropped before the tail read them are
// never skipped silently: the connection gets resync_required.
func TestRetentionOvertakesTheTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	e.log.add(message(help, alex), message(help, alex))
	e.log.drop(1)
	e.append(message(help, alex))
	if f := c.expect("resync_required"); f.Reason != "retention" {
		t.Errorf("frame %s", f.raw)
	}
	if code := c.closed(); code != gateway.CloseResyncRequired {
		t.Errorf("close %d", code)
	}
}

// errDatabaseDown is what tx.Classify makes of a database that cannot be reached.
var errDatabaseDown = fmt.Errorf("read: %w", problem.New(problem.ErrUnavailable, "The database is unavailable."))

// TestUnavailableClosesWithTryAgainLater: a connection whose port reports the database
// unavailable, in its start or mid-stream, ends with an error frame unavailable that says
// when to come back (retry_after_ms, from the base and up to twice it) and close 1013 (try
// again later), logged as a warning, not as a failure; the upgrade is a 503.
func TestUnavailableClosesWithTryAgainLater(t *testing.T) {
	t.Parallel()
	const base = 2 * time.Second
	requireRetry := func(t *testing.T, c *client) {
		t.Helper()
		f := c.expect("error")
		if f.Code != "unavailable" || f.RetryAfterMS == nil || *f.RetryAfterMS < base.Milliseconds() || *f.RetryAfterMS > 2*base.Milliseconds() {
			t.Errorf("frame %s, want unavailable with retry_after_ms in [%d, %d]", f.raw, base.Milliseconds(), 2*base.Milliseconds())
		}
		if code := c.closed(); code != gateway.CloseTryAgainLater {
			t.Errorf("close %d, want %d", code, gateway.CloseTryAgainLater)
		}
	}
	withBase := withConfig(func(c *gateway.Config) { c.RetryAfter = base })
	t.Run("start", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withBase)
		e.snapshot.fail = errDatabaseDown
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello"}`)
		requireRetry(t, c)
		if e.logs.contains("gateway connection failed") || !e.logs.contains("gateway connection lost the database") {
			t.Error("the outage was not logged as one")
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withBase)
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello"}`)
		c.expect("ready")
		e.dir.mu.Lock()
		e.dir.fail, e.dir.failErr = true, errDatabaseDown
		e.dir.mu.Unlock()
		e.append(message(help, alex))
		requireRetry(t, c)
	})
	t.Run("upgrade", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withBase)
		e.auth.failErr = errDatabaseDown
		_, resp, err := e.tryDial(t, nil, "Authorization", "Bearer sam-token")
		if err == nil {
			t.Fatal("upgrade accepted")
		}
		requireProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
	})
}

func TestFailuresCloseWithInternal(t *testing.T) {
	t.Parallel()
	t.Run("snapshot", func(t *testing.T) {
		e := newEnv(t)
		e.snapshot.fail = errFake
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello"}`)
		if f := c.expect("error"); f.Code != "internal" || f.Detail != problem.InternalDetail {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseInternal {
			t.Errorf("close %d", code)
		}
		if !e.logs.contains("gateway connection failed") {
			t.Error("the failure was not logged")
		}
	})
	t.Run("snapshot refused", func(t *testing.T) {
		e := newEnv(t)
		e.snapshot.fail = problem.ErrForbidden
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello"}`)
		if f := c.expect("error"); f.Code != "forbidden" {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseForbidden {
			t.Errorf("close %d", code)
		}
	})
	t.Run("directory", func(t *testing.T) {
		e := newEnv(t)
		c := e.dialAs(t, "sam-token")
		c.send(`{"op":"hello"}`)
		c.expect("ready")
		e.dir.mu.Lock()
		e.dir.fail = true
		e.dir.mu.Unlock()
		e.append(message(help, alex))
		if f := c.expect("error"); f.Code != "internal" {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseInternal {
			t.Errorf("close %d", code)
		}
	})
	t.Run("authenticator", func(t *testing.T) {
		e := newEnv(t)
		e.auth.fail = true
		c := e.dial(t)
		c.send(`{"op":"auth","token":"sam-token"}`)
		if f := c.expect("error"); f.Code != "internal" {
			t.Errorf("frame %s", f.raw)
		}
		if code := c.closed(); code != gateway.CloseInternal {
			t.Errorf("close %d", code)
		}
		_, resp, err := e.tryDial(t, nil, "Authorization", "Bearer sam-token")
		if err == nil {
			t.Fatal("upgrade accepted")
		}
		requireProblem(t, resp, http.StatusInternalServerError, "internal")
	})
}

// TestResumeWithConsumerAndCursorIsABadFrame: a resume frame with both consumer and after (or
// epoch), which the AsyncAPI schema forbids (oneOf), is answered validation_failed naming the
// extra member, then close 4000, before any consumer is looked up.
func TestResumeWithConsumerAndCursorIsABadFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ frame, field string }{
		{`{"op":"resume","consumer":"main","after":1}`, "after"},
		{`{"op":"resume","after":1,"consumer":"main","epoch":"` + epoch.String() + `"}`, "after"},
		{`{"op":"resume","consumer":"main","epoch":"` + epoch.String() + `"}`, "epoch"},
	} {
		c := e.dialAs(t, "helper-token")
		c.send(tc.frame)
		f := c.expect("error")
		var body struct {
			Errors []struct {
				Field string `json:"field"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(f.raw, &body); err != nil || f.Code != "validation_failed" || len(body.Errors) != 1 || body.Errors[0].Field != tc.field {
			t.Errorf("%s answered %s, want validation_failed naming %s", tc.frame, f.raw, tc.field)
		}
		if code := c.closed(); code != gateway.CloseBadFrame {
			t.Errorf("%s closed with %d, want %d", tc.frame, code, gateway.CloseBadFrame)
		}
	}
}
