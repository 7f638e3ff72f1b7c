package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

// memInvocations is InvocationStore in memory: agents lists the active agents, key the token
// key; err, when set, fails every call.
type memInvocations struct {
	mu     sync.Mutex
	rows   map[uuid.UUID]app.InvocationRow
	agents map[uuid.UUID]bool
	key    []byte
	err    error
	keyErr error
}

func newMemInvocations(agentIDs ...uuid.UUID) *memInvocations {
	m := &memInvocations{rows: map[uuid.UUID]app.InvocationRow{}, agents: map[uuid.UUID]bool{}, key: []byte("0123456789abcdef0123456789abcdef")}
	for _, id := range agentIDs {
		m.agents[id] = true
	}
	return m
}

func (m *memInvocations) ActiveAgents(_ context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	var out []uuid.UUID
	for _, id := range ids {
		if m.agents[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func (m *memInvocations) InsertInvocation(_ context.Context, r app.InvocationRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[r.ID] = r
	return nil
}

func (m *memInvocations) Invocation(_ context.Context, id uuid.UUID) (app.InvocationRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[id]
	if !ok {
		return app.InvocationRow{}, problem.ErrNotFound
	}
	return r, nil
}

func (m *memInvocations) InvocationForUpdate(ctx context.Context, id uuid.UUID) (app.InvocationRow, error) {
	return m.Invocation(ctx, id)
}

func (m *memInvocations) UpdateInvocation(_ context.Context, r app.InvocationRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[r.ID] = r
	return nil
}

func (m *memInvocations) DueInvocations(_ context.Context, before time.Time, limit int) ([]app.InvocationRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	var out []app.InvocationRow
	for _, r := range m.rows {
		if r.State == agents.InvocationPending && !r.DeliveredAt.After(before) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b app.InvocationRow) int { return a.DeliveredAt.Compare(b.DeliveredAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memInvocations) InvocationKey(context.Context) ([]byte, error) {
	if m.keyErr != nil {
		return nil, m.keyErr
	}
	return m.key, nil
}

// invocationsWorld is Invocations over the fakes: the agent Helper (a reader of the thread),
// the agent Other (no reader) and the people Alex and Sam; ack timeout 10s, 2 deliveries.
type invocationsWorld struct {
	inv   *app.Invocations
	store *memInvocations
	authz *tableAuthorizer
	log   *eventLog
	clock *clock.Fake

	thread, channel, space, message uuid.UUID
	helper, other, alex, sam        uuid.UUID
}

func newInvocationsWorld(t *testing.T) *invocationsWorld {
	t.Helper()
	w := &invocationsWorld{
		log: &eventLog{}, clock: clock.NewFake(start),
		thread: uuid.New(), channel: uuid.New(), space: uuid.New(), message: uuid.New(),
		helper: uuid.New(), other: uuid.New(), alex: uuid.New(), sam: uuid.New(),
	}
	w.store = newMemInvocations(w.helper, w.other)
	w.authz = &tableAuthorizer{deny: map[decisionKey]error{}, readers: map[uuid.UUID]bool{w.helper: true, w.alex: true, w.sam: true}}
	var err error
	w.inv, err = app.NewInvocations(app.InvocationsDeps{
		Tx: stagingTx{log: w.log}, Store: w.store, Authorizer: w.authz, Appender: w.log, Clock: w.clock,
		Config: app.InvocationConfig{AckTimeout: 10 * time.Second, MaxDeliveries: 2, SweepInterval: time.Second, SweepBatch: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *invocationsWorld) as(id uuid.UUID) context.Context {
	kind := actor.KindPerson
	if id == w.helper || id == w.other {
		kind = actor.KindAgent
	}
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: kind})
}

// invoke posts, as by, a message mentioning mentions, in the transaction stagingTx opens.
func (w *invocationsWorld) invoke(t *testing.T, by uuid.UUID, p app.Posted) error {
	t.Helper()
	p.MessageID, p.ThreadID, p.ChannelID = w.message, w.thread, w.channel
	if p.ParticipantIDs == nil {
		p.SpaceID = w.space
	}
	return stagingTx{log: w.log}.RunInTx(w.as(by), func(ctx context.Context) error { return w.inv.Invoke(ctx, p) })
}

// one invokes Helper by Alex's mention and returns its invocation and token.
func (w *invocationsWorld) one(t *testing.T) (agents.Invocation, string) {
	t.Helper()
	if err := w.invoke(t, w.alex, app.Posted{MentionIDs: []uuid.UUID{w.helper}}); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	for _, r := range w.store.rows {
		tok, err := w.inv.InvocationToken(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Invocation, tok
	}
	t.Fatal("no invocation")
	return agents.Invocation{}, ""
}

func TestNewInvocationsRefusesMissingPartsAndBadConfig(t *testing.T) {
	t.Parallel()
	_, err := app.NewInvocations(app.InvocationsDeps{})
	for _, want := range []string{"transaction runner", "invocation store", "authorizer", "appender", "clock",
		app.KeyInvocationAckTimeout.Name, app.KeyInvocationMaxDeliveries.Name, app.KeyInvocationSweepInterval.Name, app.KeyInvocationSweepBatch.Name} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("NewInvocations(empty) = %v, want it to name %s", err, want)
		}
	}
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		by      func(w *invocationsWorld) uuid.UUID
		posted  func(w *invocationsWorld) app.Posted
		reasons map[string]string // agent name: reason
	}{
		{
			name: "a person mentions an agent twice and a person",
			by:   func(w *invocationsWorld) uuid.UUID { return w.alex },
			posted: func(w *invocationsWorld) app.Posted {
				return app.Posted{MentionIDs: []uuid.UUID{w.helper, w.sam, w.helper}}
			},
			reasons: map[string]string{"helper": agents.ReasonMention},
		},
		{
			name: "a direct message with an agent, and a mention there",
			by:   func(w *invocationsWorld) uuid.UUID { return w.alex },
			posted: func(w *invocationsWorld) app.Posted {
				return app.Posted{ParticipantIDs: []uuid.UUID{w.alex, w.helper}}
			},
			reasons: map[string]string{"helper": agents.ReasonDirectMessage},
		},
		{
			name: "a mention in a direct message is a mention",
			by:   func(w *invocationsWorld) uuid.UUID { return w.alex },
			posted: func(w *invocationsWorld) app.Posted {
				return app.Posted{ParticipantIDs: []uuid.UUID{w.alex, w.helper}, MentionIDs: []uuid.UUID{w.helper}}
			},
			reasons: map[string]string{"helper": agents.ReasonMention},
		},
		{
			name:    "an agent that cannot read the thread",
			by:      func(w *invocationsWorld) uuid.UUID { return w.alex },
			posted:  func(w *invocationsWorld) app.Posted { return app.Posted{MentionIDs: []uuid.UUID{w.other}} },
			reasons: map[string]string{},
		},
		{
			name:    "an agent's message invokes nobody",
			by:      func(w *invocationsWorld) uuid.UUID { return w.other },
			posted:  func(w *invocationsWorld) app.Posted { return app.Posted{MentionIDs: []uuid.UUID{w.helper}} },
			reasons: map[string]string{},
		},
		{
			name:    "mentions of people only",
			by:      func(w *invocationsWorld) uuid.UUID { return w.sam },
			posted:  func(w *invocationsWorld) app.Posted { return app.Posted{MentionIDs: []uuid.UUID{w.alex, w.sam}} },
			reasons: map[string]string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newInvocationsWorld(t)
			by := tc.by(w)
			if err := w.invoke(t, by, tc.posted(w)); err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			names := map[uuid.UUID]string{w.helper: "helper", w.other: "other"}
			got := map[string]string{}
			for _, r := range w.store.rows {
				got[names[r.AgentID]] = r.Reason
				if r.Attempt != 1 || r.State != agents.InvocationPending || r.InvokedBy != by || r.MessageID != w.message ||
					!r.CreatedAt.Equal(start) || !r.DeliveredAt.Equal(start) {
					t.Fatalf("row %+v", r)
				}
			}
			if len(got) != len(tc.reasons) {
				t.Fatalf("invocations %v, want %v", got, tc.reasons)
			}
			for k, v := range tc.reasons {
				if got[k] != v {
					t.Fatalf("invocations %v, want %v", got, tc.reasons)
				}
			}
			events := w.log.events()
			if len(events) != len(tc.reasons) {
				t.Fatalf("%d events, want %d", len(events), len(tc.reasons))
			}
			for _, e := range events {
				if e.Type != app.InvocationRequested || e.AudienceID != w.helper || e.ResourceKind != kernel.ResourceThread ||
					e.ResourceID != w.thread || e.ThreadID != w.thread || e.ChannelID != w.channel || e.ActorID != by {
					t.Fatalf("event %+v", e)
				}
			}
		})
	}
}

func TestInvokeFailures(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	if err := w.inv.Invoke(context.Background(), app.Posted{}); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Invoke without an actor = %v", err)
	}
	w.store.err = errBoom
	if err := w.invoke(t, w.alex, app.Posted{MentionIDs: []uuid.UUID{w.helper}}); !errors.Is(err, errBoom) {
		t.Fatalf("Invoke with a failing store = %v", err)
	}
	if len(w.log.events()) != 0 {
		t.Fatal("a failed invoke appended")
	}
}

func TestInvocationTokens(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	inv, tok := w.one(t)
	again, err := w.inv.InvocationToken(context.Background(), inv.ID)
	if err != nil || again != tok || !strings.HasPrefix(tok, inv.ID.String()+".") {
		t.Fatalf("token %q then %q (%v)", tok, again, err)
	}
	other, _ := w.inv.InvocationToken(context.Background(), uuid.New())
	if other == tok {
		t.Fatal("two invocations share a token")
	}
	fresh := newInvocationsWorld(t)
	fresh.store.keyErr = errBoom
	if _, err := fresh.inv.InvocationToken(context.Background(), inv.ID); !errors.Is(err, errBoom) {
		t.Fatalf("a failing key = %v", err)
	}
	if _, err := fresh.inv.Answer(fresh.as(fresh.helper), app.Reply{Token: tok}); !errors.Is(err, errBoom) {
		t.Fatalf("Answer with a failing key = %v", err)
	}
}

func TestAck(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	inv, tok := w.one(t)
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		id    uuid.UUID
		token string
		err   error
	}{
		{"no actor", context.Background(), inv.ID, tok, problem.ErrUnauthenticated},
		{"a wrong token", w.as(w.helper), inv.ID, tok + "x", problem.ErrNotFound},
		{"no dot", w.as(w.helper), inv.ID, "token", problem.ErrNotFound},
		{"not an id", w.as(w.helper), inv.ID, "x." + tok, problem.ErrNotFound},
		{"the token of another invocation", w.as(w.helper), uuid.New(), tok, problem.ErrNotFound},
		{"another agent", w.as(w.other), inv.ID, tok, problem.ErrForbidden},
	} {
		if _, err := w.inv.Ack(tc.ctx, tc.id, tc.token); !errors.Is(err, tc.err) {
			t.Fatalf("%s: Ack = %v, want %v", tc.name, err, tc.err)
		}
	}
	for range 2 {
		got, err := w.inv.Ack(w.as(w.helper), inv.ID, tok)
		if err != nil || got.State != agents.InvocationAcknowledged {
			t.Fatalf("Ack = %+v, %v", got, err)
		}
	}
	w.authz.deny[decisionKey{kernel.ActionThreadRead, w.thread}] = problem.ErrNotFound
	if _, err := w.inv.Ack(w.as(w.helper), inv.ID, tok); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Ack of a thread no longer read = %v", err)
	}
	delete(w.store.rows, inv.ID)
	delete(w.authz.deny, decisionKey{kernel.ActionThreadRead, w.thread})
	if _, err := w.inv.Ack(w.as(w.helper), inv.ID, tok); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Ack of a missing invocation = %v", err)
	}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	inv, tok := w.one(t)
	reply := uuid.New()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		r    app.Reply
		err  error
	}{
		{"no actor", context.Background(), app.Reply{Token: tok, ThreadID: w.thread}, problem.ErrUnauthenticated},
		{"a forged token", w.as(w.helper), app.Reply{Token: tok + "x", ThreadID: w.thread}, problem.ErrValidation},
		{"another thread", w.as(w.helper), app.Reply{Token: tok, ThreadID: uuid.New()}, problem.ErrValidation},
		{"another agent", w.as(w.other), app.Reply{Token: tok, ThreadID: w.thread}, problem.ErrValidation},
	} {
		if _, err := w.inv.Answer(tc.ctx, tc.r); !errors.Is(err, tc.err) {
			t.Fatalf("%s: Answer = %v, want %v", tc.name, err, tc.err)
		}
	}
	id, err := w.inv.Answer(w.as(w.helper), app.Reply{Token: tok, MessageID: reply, ThreadID: w.thread})
	if err != nil || id != inv.ID {
		t.Fatalf("Answer = %v, %v", id, err)
	}
	if r := w.store.rows[inv.ID]; r.State != agents.InvocationAnswered || r.ReplyMessageID != reply {
		t.Fatalf("answered row %+v", r)
	}
	if _, err := w.inv.Answer(w.as(w.helper), app.Reply{Token: tok, MessageID: uuid.New(), ThreadID: w.thread}); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("a second answer = %v", err)
	}
	unknown, _ := w.inv.InvocationToken(context.Background(), uuid.New())
	if _, err := w.inv.Answer(w.as(w.helper), app.Reply{Token: unknown, ThreadID: w.thread}); !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("the token of no invocation = %v", err)
	}
}

func TestAckForRunAndGet(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	inv, _ := w.one(t)
	if _, err := w.inv.AckForRun(context.Background(), inv.ID, w.thread); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("AckForRun without an actor = %v", err)
	}
	for _, tc := range []struct {
		name       string
		by, id, th uuid.UUID
	}{
		{"another thread", w.helper, inv.ID, uuid.New()},
		{"another agent", w.other, inv.ID, w.thread},
		{"no such invocation", w.helper, uuid.New(), w.thread},
	} {
		if _, err := w.inv.AckForRun(w.as(tc.by), tc.id, tc.th); !errors.Is(err, problem.ErrValidation) {
			t.Fatalf("%s: AckForRun = %v", tc.name, err)
		}
	}
	got, err := w.inv.AckForRun(w.as(w.helper), inv.ID, w.thread)
	if err != nil || got.InvokedBy != w.alex || w.store.rows[inv.ID].State != agents.InvocationAcknowledged {
		t.Fatalf("AckForRun = %+v, %v", got, err)
	}

	for _, who := range []uuid.UUID{w.helper, w.alex} {
		if g, err := w.inv.Get(w.as(who), inv.ID); err != nil || g.ID != inv.ID {
			t.Fatalf("Get as a party = %+v, %v", g, err)
		}
	}
	if _, err := w.inv.Get(w.as(w.sam), inv.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Get as another reader = %v", err)
	}
	if _, err := w.inv.Get(context.Background(), inv.ID); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Fatalf("Get without an actor = %v", err)
	}
	if _, err := w.inv.Get(w.as(w.helper), uuid.New()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Get of a missing invocation = %v", err)
	}
	w.authz.deny[decisionKey{kernel.ActionThreadRead, w.thread}] = problem.ErrNotFound
	if _, err := w.inv.Get(w.as(w.alex), inv.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Get of a thread no longer read = %v", err)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	w := newInvocationsWorld(t)
	inv, _ := w.one(t)
	system := uuid.New()
	sweep := func(wantR, wantF int) {
		t.Helper()
		r, f, err := w.inv.Sweep(context.Background(), system)
		if err != nil || r != wantR || f != wantF {
			t.Fatalf("Sweep = %d, %d, %v; want %d, %d", r, f, err, wantR, wantF)
		}
	}
	w.clock.Advance(9 * time.Second)
	sweep(0, 0)
	w.clock.Advance(time.Second)
	sweep(1, 0)
	if r := w.store.rows[inv.ID]; r.Attempt != 2 || !r.DeliveredAt.Equal(start.Add(10*time.Second)) {
		t.Fatalf("redelivered row %+v", r)
	}
	w.clock.Advance(10 * time.Second)
	sweep(0, 1)
	sweep(0, 0)
	events := w.log.events()
	var types []string
	var audiences []uuid.UUID
	for _, e := range events[1:] {
		types = append(types, e.Type)
		audiences = append(audiences, e.AudienceID)
		if e.ActorID != system {
			t.Fatalf("a sweep event's actor %s, want the system", e.ActorID)
		}
	}
	if !slices.Equal(types, []string{app.InvocationRequested, app.InvocationFailed, app.InvocationFailed}) ||
		!slices.Equal(audiences, []uuid.UUID{w.helper, w.alex, w.helper}) {
		t.Fatalf("sweep events %v to %v", types, audiences)
	}
	if r := w.store.rows[inv.ID]; r.State != agents.InvocationFailed || r.Attempt != 2 {
		t.Fatalf("failed row %+v", r)
	}
	if w.inv.SweepInterval() != time.Second {
		t.Fatal("SweepInterval")
	}
	w.store.err = errBoom
	if _, _, err := w.inv.Sweep(context.Background(), system); !errors.Is(err, errBoom) {
		t.Fatalf("Sweep with a failing store = %v", err)
	}
}
