package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
)

// fakeServer is a hand-written bothy in miniature: runs with their state machine, messages,
// a consumer, and Idempotency-Key replay as bothy does it (a repeated key returns the stored
// answer and writes nothing). fail injects one failure at a step, before or after the write
// (after: the write happened, the answer was lost, as with a crash or a dropped connection).
type fakeServer struct {
	mu sync.Mutex

	me       Me
	messages map[string]Message // by id
	order    []string           // message ids in posting order
	runs     map[string]Run
	replays  map[string]any // idempotency key -> stored answer
	bodies   map[string]any // idempotency key -> request body

	pages      []EventPage // ConsumerEvents answers them in turn, then empty pages
	acked      []int64
	consumer   int // EnsureConsumer calls
	deleted    int
	heartbeats int
	calls      []string

	// fail maps a step ("get", "run", "reply", "finish", "events", ...) to the failure of
	// its next call; after it the step works again.
	fail map[string]failure
	// refuse maps a step to a problem answered on every call.
	refuse map[string]*APIError
	nextID int
}

type failure struct {
	err        error
	afterWrite bool
}

func newFakeServer() *fakeServer {
	return &fakeServer{
		me:       Me{ID: "agent-echo", Handle: "echo"},
		messages: map[string]Message{},
		runs:     map[string]Run{},
		replays:  map[string]any{},
		bodies:   map[string]any{},
		fail:     map[string]failure{},
		refuse:   map[string]*APIError{},
	}
}

var errNetwork = errors.New("connection reset by peer")

// step records a call and answers an injected failure or refusal (before the write).
func (f *fakeServer) step(name string) (after bool, err error) {
	f.calls = append(f.calls, name)
	if p, ok := f.refuse[name]; ok {
		return false, p
	}
	if fl, ok := f.fail[name]; ok {
		delete(f.fail, name)
		if !fl.afterWrite {
			return false, fl.err
		}
		return true, fl.err
	}
	return false, nil
}

// replay answers a repeated key; a different body under the same key is bothy's 409.
func (f *fakeServer) replay(key string, body any) (any, bool, error) {
	if key == "" {
		return nil, false, nil
	}
	v, ok := f.replays[key]
	if !ok {
		return nil, false, nil
	}
	if !reflect.DeepEqual(f.bodies[key], body) {
		return nil, false, &APIError{Status: http.StatusConflict, Code: "conflict", Detail: "This Idempotency-Key was already used for a different request"}
	}
	return v, true, nil
}

func (f *fakeServer) id(prefix string) string {
	f.nextID++
	return fmt.Sprintf("%s-%d", prefix, f.nextID)
}

func (f *fakeServer) Me(context.Context) (Me, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("me"); err != nil {
		return Me{}, err
	}
	return f.me, nil
}

func (f *fakeServer) EnsureConsumer(_ context.Context, name string) (Consumer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("consumer"); err != nil {
		return Consumer{}, err
	}
	f.consumer++
	return Consumer{Name: name}, nil
}

func (f *fakeServer) DeleteConsumer(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted++
	return nil
}

func (f *fakeServer) ConsumerEvents(context.Context, string) (EventPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("events"); err != nil {
		return EventPage{}, err
	}
	if len(f.pages) == 0 {
		last := int64(0)
		if n := len(f.acked); n > 0 {
			last = f.acked[n-1]
		}
		return EventPage{Events: []Event{}, NextCursor: last, HeadSeq: last}, nil
	}
	p := f.pages[0]
	f.pages = f.pages[1:]
	return p, nil
}

func (f *fakeServer) AckConsumer(_ context.Context, _ string, seq int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("ack"); err != nil {
		return err
	}
	f.acked = append(f.acked, seq)
	return nil
}

func (f *fakeServer) Heartbeat(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeats++
	return nil
}

func (f *fakeServer) GetMessage(_ context.Context, id string) (Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("get"); err != nil {
		return Message{}, err
	}
	m, ok := f.messages[id]
	if !ok {
		return Message{}, &APIError{Status: http.StatusNotFound, Code: "not_found"}
	}
	return m, nil
}

func (f *fakeServer) CreateRun(_ context.Context, threadID string, in CreateRun, key string) (Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	after, err := f.step("run")
	if err != nil && !after {
		return Run{}, err
	}
	if v, ok, rerr := f.replay(key, in); rerr != nil || ok {
		if rerr != nil {
			return Run{}, rerr
		}
		return v.(Run), err
	}
	r := Run{ID: f.id("run"), ThreadID: threadID, InvocationID: in.InvocationID, State: in.State}
	f.runs[r.ID] = r
	if key != "" {
		f.replays[key], f.bodies[key] = r, in
	}
	return r, err
}

func (f *fakeServer) UpdateRun(_ context.Context, runID string, in UpdateRun) (Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	after, err := f.step("finish")
	if err != nil && !after {
		return Run{}, err
	}
	r, ok := f.runs[runID]
	if !ok {
		return Run{}, &APIError{Status: http.StatusNotFound, Code: "not_found"}
	}
	if final(r.State) {
		return Run{}, &APIError{Status: http.StatusConflict, Code: "conflict", Detail: "the run has finished"}
	}
	r.State = in.State
	f.runs[runID] = r
	return r, err
}

func (f *fakeServer) GetRun(_ context.Context, runID string) (Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.step("getrun"); err != nil {
		return Run{}, err
	}
	r, ok := f.runs[runID]
	if !ok {
		return Run{}, &APIError{Status: http.StatusNotFound, Code: "not_found"}
	}
	return r, nil
}

func (f *fakeServer) PostMessage(_ context.Context, threadID string, in PostMessage, key string) (Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	after, err := f.step("reply")
	if err != nil && !after {
		return Message{}, err
	}
	if v, ok, rerr := f.replay(key, in); rerr != nil || ok {
		if rerr != nil {
			return Message{}, rerr
		}
		return v.(Message), err
	}
	m := Message{ID: f.id("msg"), ThreadID: threadID, AuthorID: f.me.ID, ContentMD: in.ContentMD}
	f.messages[m.ID] = m
	f.order = append(f.order, m.ID)
	if key != "" {
		f.replays[key], f.bodies[key] = m, in
	}
	return m, err
}

// replies are the messages the agent posted, in order.
func (f *fakeServer) replies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range f.order {
		if m := f.messages[id]; m.AuthorID == f.me.ID {
			out = append(out, m.ContentMD)
		}
	}
	return out
}

// runStates are the states of every run.
func (f *fakeServer) runStates() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for id, r := range f.runs {
		out[id] = r.State
	}
	return out
}

// invocationEvent is an invocation.requested delivery of invocation inv for message msg.
func invocationEvent(seq int64, inv, msg, token string) Event {
	p, err := json.Marshal(Invocation{
		ID: inv, AgentID: "agent-echo", MessageID: msg, ThreadID: "thread-1", ChannelID: "channel-1",
		InvokedBy: "person-sam", Reason: "mention", Attempt: 1, State: "pending",
	})
	if err != nil {
		panic(err)
	}
	return Event{Seq: seq, ID: fmt.Sprintf("event-%d", seq), Type: EventInvocationRequested, Payload: p, InvocationToken: token}
}

// fakeGateway hands out scripted sessions: each Resume takes the next script (an error when
// none is left, as when bothy is down).
type fakeGateway struct {
	mu      sync.Mutex
	scripts [][]Frame
	streams []*fakeStream
	dials   int
}

func (g *fakeGateway) Resume(context.Context, string) (Stream, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dials++
	if len(g.scripts) == 0 {
		return nil, errNetwork
	}
	s := &fakeStream{frames: g.scripts[0]}
	g.scripts = g.scripts[1:]
	g.streams = append(g.streams, s)
	return s, nil
}

type fakeStream struct {
	mu     sync.Mutex
	frames []Frame
	acks   []int64
	closed bool
}

func (s *fakeStream) Next(context.Context) (Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.frames) == 0 {
		return Frame{}, errNetwork
	}
	f := s.frames[0]
	s.frames = s.frames[1:]
	return f, nil
}

func (s *fakeStream) Ack(_ context.Context, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acks = append(s.acks, seq)
	return nil
}

func (s *fakeStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
