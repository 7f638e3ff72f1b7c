package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testConfig() Config {
	return Config{Consumer: "echo", HeartbeatInterval: time.Hour, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
}

// newTestAgent is an agent over srv that knows who it is (Run reads it at start).
func newTestAgent(srv *fakeServer, gw Gateway) *Agent {
	a := New(srv, gw, testConfig(), quiet())
	a.me = srv.me
	return a
}

// withHello is a fake bothy where Sam's message "@echo hello" exists.
func withHello() *fakeServer {
	srv := newFakeServer()
	srv.messages["msg-sam"] = Message{ID: "msg-sam", ThreadID: "thread-1", AuthorID: "person-sam", ContentMD: "@echo hello"}
	return srv
}

func TestHandle(t *testing.T) {
	t.Parallel()
	other := invocationEvent(3, "inv-2", "msg-sam", "tok")
	other.Payload = json.RawMessage(`{"id":"inv-2","agent_id":"agent-helper","message_id":"msg-sam","thread_id":"thread-1","invoked_by":"person-sam"}`)
	redacted := invocationEvent(4, "inv-3", "msg-sam", "")
	redacted.Redacted, redacted.Payload = true, nil
	forbidden := &APIError{Status: http.StatusForbidden, Code: "forbidden"}
	archived := &APIError{Status: http.StatusConflict, Code: "conflict", Detail: "the channel is archived"}
	unavailable := &APIError{Status: http.StatusServiceUnavailable, Code: "unavailable"}

	tests := []struct {
		name      string
		ev        Event
		setup     func(*fakeServer)
		want      Outcome
		wantErr   bool
		replies   []string
		runStates []string
		calls     []string
	}{
		{
			name: "another event type is ignored without a call",
			ev:   Event{Seq: 1, Type: "message.created", Payload: json.RawMessage(`{}`)},
			want: Ignored,
		},
		{
			name: "an invocation of another agent is ignored",
			ev:   other,
			want: Ignored,
		},
		{
			name: "a redacted delivery is ignored",
			ev:   redacted,
			want: Ignored,
		},
		{
			name:    "a payload that does not decode is ignored",
			ev:      Event{Seq: 5, Type: EventInvocationRequested, Payload: json.RawMessage(`[1]`)},
			want:    Ignored,
			replies: nil,
		},
		{
			name:      "an invocation is answered: message read, run started, reply posted, run finished",
			ev:        invocationEvent(2, "inv-1", "msg-sam", "tok-1"),
			want:      Answered,
			replies:   []string{"Echo: hello"},
			runStates: []string{RunSucceeded},
			calls:     []string{"get", "run", "reply", "finish"},
		},
		{
			name:      "a message gone since is answered without its text",
			ev:        invocationEvent(2, "inv-1", "msg-deleted", "tok-1"),
			want:      Answered,
			replies:   []string{"Echo: (nothing to echo)"},
			runStates: []string{RunSucceeded},
			calls:     []string{"get", "run", "reply", "finish"},
		},
		{
			name:    "a refused run gives the invocation up without a reply",
			ev:      invocationEvent(2, "inv-1", "msg-sam", "tok-1"),
			setup:   func(s *fakeServer) { s.refuse["run"] = forbidden },
			want:    GaveUp,
			replies: nil,
			calls:   []string{"get", "run"},
		},
		{
			name:      "a refused reply fails the run and gives the invocation up",
			ev:        invocationEvent(2, "inv-1", "msg-sam", "tok-1"),
			setup:     func(s *fakeServer) { s.refuse["reply"] = archived },
			want:      GaveUp,
			runStates: []string{RunFailed},
			calls:     []string{"get", "run", "reply", "finish"},
		},
		{
			name:    "bothy unavailable is an error: the event stays unacknowledged",
			ev:      invocationEvent(2, "inv-1", "msg-sam", "tok-1"),
			setup:   func(s *fakeServer) { s.refuse["get"] = unavailable },
			wantErr: true,
			calls:   []string{"get"},
		},
		{
			name:      "a network failure of the run is an error",
			ev:        invocationEvent(2, "inv-1", "msg-sam", "tok-1"),
			setup:     func(s *fakeServer) { s.fail["run"] = failure{err: errNetwork} },
			wantErr:   true,
			runStates: nil,
			calls:     []string{"get", "run"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := withHello()
			if tc.setup != nil {
				tc.setup(srv)
			}
			a := newTestAgent(srv, &fakeGateway{})
			got, err := a.Handle(context.Background(), tc.ev)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Handle error = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Fatalf("Handle = %q, want %q", got, tc.want)
			}
			if r := srv.replies(); !slices.Equal(r, tc.replies) {
				t.Fatalf("replies = %q, want %q", r, tc.replies)
			}
			var states []string
			for _, s := range srv.runStates() {
				states = append(states, s)
			}
			if !slices.Equal(states, tc.runStates) {
				t.Fatalf("run states = %q, want %q", states, tc.runStates)
			}
			if !slices.Equal(srv.calls, tc.calls) {
				t.Fatalf("calls = %q, want %q", srv.calls, tc.calls)
			}
		})
	}
}

// TestHandleIsIdempotentPerInvocation crashes the agent at every step of an answer, before
// and after the write (the write done, its answer lost), and delivers the invocation again,
// as bothy does until it is acknowledged, also as a redelivery with a new event: every time
// there is exactly one reply and one run, succeeded.
func TestHandleIsIdempotentPerInvocation(t *testing.T) {
	t.Parallel()
	type crash struct {
		step       string
		afterWrite bool
	}
	var crashes []crash
	for _, step := range []string{"get", "run", "reply", "finish"} {
		crashes = append(crashes, crash{step, false}, crash{step, true})
	}
	for _, c := range crashes {
		for _, redelivery := range []bool{false, true} {
			name := c.step
			if c.afterWrite {
				name += " after the write"
			}
			if redelivery {
				name += ", redelivered"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := withHello()
				srv.fail[c.step] = failure{err: errNetwork, afterWrite: c.afterWrite}
				first := invocationEvent(7, "inv-1", "msg-sam", "tok-1")
				a := newTestAgent(srv, &fakeGateway{})
				if _, err := a.Handle(context.Background(), first); err == nil {
					t.Fatal("the crash at the step did not surface as an error")
				}
				again := first
				if redelivery {
					again = invocationEvent(9, "inv-1", "msg-sam", "tok-1")
					again.Redelivered = true
				}
				// A new process: a fresh agent over the same bothy.
				b := newTestAgent(srv, &fakeGateway{})
				for range 2 {
					got, err := b.Handle(context.Background(), again)
					if err != nil || got != Answered {
						t.Fatalf("Handle after the crash = %q, %v; want answered", got, err)
					}
				}
				if r := srv.replies(); !slices.Equal(r, []string{"Echo: hello"}) {
					t.Fatalf("replies = %q, want exactly one", r)
				}
				states := srv.runStates()
				if len(states) != 1 {
					t.Fatalf("runs = %v, want exactly one", states)
				}
				for _, s := range states {
					if s != RunSucceeded {
						t.Fatalf("run state = %q, want succeeded", s)
					}
				}
			})
		}
	}
}

func TestKeyAndReply(t *testing.T) {
	t.Parallel()
	if got := Key("inv-1", "reply"); got != "echo:inv-1:reply" {
		t.Fatalf("Key = %q", got)
	}
	if Key("inv-1", "run") == Key("inv-1", "reply") || Key("inv-1", "run") == Key("inv-2", "run") {
		t.Fatal("keys of different steps or invocations collide")
	}
	tests := []struct{ text, handle, want string }{
		{"@echo hello", "echo", "Echo: hello"},
		{"hello @echo, how are you", "echo", "Echo: hello , how are you"},
		{"@echoes stay @echo", "echo", "Echo: @echoes stay"},
		{"ask @sam", "echo", "Echo: ask @sam"},
		{"@echo", "echo", "Echo: (nothing to echo)"},
		{"", "echo", "Echo: (nothing to echo)"},
		{"  two\n lines  ", "", "Echo: two lines"},
	}
	for _, tc := range tests {
		if got := Reply(tc.text, tc.handle); got != tc.want {
			t.Errorf("Reply(%q, %q) = %q, want %q", tc.text, tc.handle, got, tc.want)
		}
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{errNetwork, false},
		{&APIError{Status: 500}, false},
		{&APIError{Status: 503}, false},
		{&APIError{Status: 429}, false},
		{&APIError{Status: 401}, false},
		{&APIError{Status: 400}, true},
		{&APIError{Status: 403}, true},
		{&APIError{Status: 404}, true},
		{&APIError{Status: 409}, true},
		{errors.Join(errNetwork, &APIError{Status: 403}), true},
	}
	for _, tc := range tests {
		if got := permanent(tc.err); got != tc.want {
			t.Errorf("permanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := backoff{min: 10 * time.Millisecond, max: 80 * time.Millisecond}
	ceil := b.min
	for i := range 20 {
		d := b.next()
		if d < b.min || d > ceil {
			t.Fatalf("attempt %d: wait %v outside [%v, %v]", i, d, b.min, ceil)
		}
		ceil = min(ceil*2, b.max)
	}
	b.reset()
	if d := b.next(); d != b.min {
		t.Fatalf("after reset: %v, want %v", d, b.min)
	}
}

// TestStream: events are handled and acknowledged by seq, cursor and catchup.complete frames
// are acknowledged, acks never repeat or go back (spaced by the interval while catching up),
// and a failed handling ends the session without acknowledging the event.
func TestStream(t *testing.T) {
	t.Parallel()
	inv := invocationEvent(5, "inv-1", "msg-sam", "tok-1")
	tests := []struct {
		name     string
		frames   []Frame
		interval time.Duration // Config.CatchUpAckInterval
		setup    func(*fakeServer)
		acks     []int64
		caughtUp bool
		replies  []string
		wantErr  error
	}{
		{
			name: "catch-up then live",
			frames: []Frame{
				{Op: "event", Event: Event{Seq: 3, Type: "message.created"}},
				{Op: "event", Event: inv},
				{Op: "cursor", Cursor: 5},
				{Op: "cursor", Cursor: 7},
				{Op: "catchup.complete", Cursor: 9},
				{Op: "acked", Cursor: 0},
				{Op: "heartbeat"},
			},
			acks:     []int64{3, 5, 7, 9},
			caughtUp: true,
			replies:  []string{"Echo: hello"},
			wantErr:  errNetwork,
		},
		{
			// The first ack goes at once; within the interval the catch-up's next ones wait,
			// catchup.complete's goes whatever the interval, and live events go one by one.
			name: "acks spaced while catching up",
			frames: []Frame{
				{Op: "event", Event: Event{Seq: 3, Type: "message.created"}},
				{Op: "event", Event: inv},
				{Op: "cursor", Cursor: 7},
				{Op: "catchup.complete", Cursor: 9},
				{Op: "event", Event: Event{Seq: 11, Type: "message.created"}},
				{Op: "event", Event: Event{Seq: 12, Type: "message.created"}},
			},
			interval: time.Hour,
			acks:     []int64{3, 9, 11, 12},
			caughtUp: true,
			replies:  []string{"Echo: hello"},
			wantErr:  errNetwork,
		},
		{
			name:    "a transient failure leaves the event unacknowledged",
			frames:  []Frame{{Op: "event", Event: Event{Seq: 3, Type: "message.created"}}, {Op: "event", Event: inv}},
			setup:   func(s *fakeServer) { s.fail["reply"] = failure{err: errNetwork} },
			acks:    []int64{3},
			wantErr: errNetwork,
		},
		{
			name:    "resync_required",
			frames:  []Frame{{Op: "resync_required"}},
			wantErr: errResync,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := withHello()
			if tc.setup != nil {
				tc.setup(srv)
			}
			gw := &fakeGateway{scripts: [][]Frame{tc.frames}}
			a := newTestAgent(srv, gw)
			a.cfg.CatchUpAckInterval = tc.interval
			caughtUp, err := a.stream(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("stream error = %v, want %v", err, tc.wantErr)
			}
			if caughtUp != tc.caughtUp {
				t.Fatalf("caught up = %v, want %v", caughtUp, tc.caughtUp)
			}
			s := gw.streams[0]
			if !slices.Equal(s.acks, tc.acks) || !s.closed {
				t.Fatalf("acks = %v (closed %v), want %v and closed", s.acks, s.closed, tc.acks)
			}
			if r := srv.replies(); !slices.Equal(r, tc.replies) {
				t.Fatalf("replies = %q, want %q", r, tc.replies)
			}
		})
	}
}

// TestDrain: the REST fallback handles each page and acknowledges its next_cursor until it
// is caught up; a failed page is not acknowledged; 410 asks for a resync.
func TestDrain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pages   []EventPage
		setup   func(*fakeServer)
		acks    []int64
		replies []string
		wantErr error
		problem bool // the error is a problem of bothy
	}{
		{
			name: "two pages then caught up",
			pages: []EventPage{
				{Events: []Event{{Seq: 2, Type: "message.created"}, invocationEvent(4, "inv-1", "msg-sam", "tok")}, NextCursor: 6, HeadSeq: 9},
				{Events: []Event{}, NextCursor: 9, HeadSeq: 9},
			},
			acks:    []int64{6, 9},
			replies: []string{"Echo: hello"},
		},
		{
			name:    "a failed answer stops before the ack",
			pages:   []EventPage{{Events: []Event{invocationEvent(4, "inv-1", "msg-sam", "tok")}, NextCursor: 6, HeadSeq: 9}},
			setup:   func(s *fakeServer) { s.refuse["get"] = &APIError{Status: http.StatusServiceUnavailable} },
			problem: true,
		},
		{
			name:    "410 asks for a resync",
			setup:   func(s *fakeServer) { s.refuse["events"] = &APIError{Status: http.StatusGone, Code: "resync_required"} },
			wantErr: errResync,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := withHello()
			srv.pages = tc.pages
			if tc.setup != nil {
				tc.setup(srv)
			}
			a := newTestAgent(srv, &fakeGateway{})
			err := a.drain(context.Background())
			var ae *APIError
			switch {
			case tc.problem:
				if !errors.As(err, &ae) {
					t.Fatalf("drain = %v, want a problem", err)
				}
			case !errors.Is(err, tc.wantErr):
				t.Fatalf("drain = %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(srv.acked, tc.acks) {
				t.Fatalf("acks = %v, want %v", srv.acked, tc.acks)
			}
			if r := srv.replies(); !slices.Equal(r, tc.replies) {
				t.Fatalf("replies = %q, want %q", r, tc.replies)
			}
		})
	}
}

// TestRun: the agent starts (its principal read and its consumer created after transient
// failures), heartbeats, answers through the gateway, falls back to the REST page while the
// gateway is down, resyncs its consumer after resync_required, and stops when ctx ends.
func TestRun(t *testing.T) {
	t.Parallel()
	srv := withHello()
	srv.fail["me"] = failure{err: errNetwork}
	srv.fail["consumer"] = failure{err: &APIError{Status: http.StatusServiceUnavailable}}
	srv.pages = []EventPage{{Events: []Event{invocationEvent(8, "inv-2", "msg-sam", "tok-2")}, NextCursor: 8, HeadSeq: 8}}
	gw := &fakeGateway{scripts: [][]Frame{
		{{Op: "event", Event: invocationEvent(5, "inv-1", "msg-sam", "tok-1")}, {Op: "catchup.complete", Cursor: 6}},
		{{Op: "resync_required"}},
	}}
	a := New(srv, gw, testConfig(), quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	// Wait for the work, not for a time: both invocations answered and the page acked.
	deadline := time.Now().Add(10 * time.Second)
	for {
		srv.mu.Lock()
		ok := len(srv.order) == 2 && slices.Contains(srv.acked, 8) && srv.deleted == 1
		srv.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			srv.mu.Lock()
			t.Fatalf("the agent did not answer both invocations: order %v, acked %v, deleted %d", srv.order, srv.acked, srv.deleted)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil after ctx ended", err)
	}
	if r := srv.replies(); !reflect.DeepEqual(r, []string{"Echo: hello", "Echo: hello"}) {
		t.Fatalf("replies = %q", r)
	}
	if srv.heartbeats == 0 {
		t.Fatal("no heartbeat")
	}
	if srv.consumer < 2 {
		t.Fatalf("consumer created %d times, want at start and after the resync", srv.consumer)
	}
	if a.me != srv.me {
		t.Fatalf("me = %+v", a.me)
	}
	if s := gw.streams[0]; !slices.Equal(s.acks, []int64{5, 6}) {
		t.Fatalf("gateway acks = %v", s.acks)
	}
}

// TestRunStopsOnARefusedToken: a token bothy refuses ends Run at once with the error.
func TestRunStopsOnARefusedToken(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	srv.refuse["me"] = &APIError{Status: http.StatusUnauthorized, Code: "unauthenticated"}
	err := New(srv, &fakeGateway{}, testConfig(), quiet()).Run(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("Run = %v, want the 401", err)
	}
}
