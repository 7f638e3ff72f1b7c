package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
)

// memPresence is an in-memory app.PresenceStore: Due returns the rows last announced at or
// before the cutoff, Lock creates a row on first use.
type memPresence struct {
	mu   sync.Mutex
	rows map[uuid.UUID]domain.PresenceRow
	err  error
}

func newMemPresence() *memPresence { return &memPresence{rows: map[uuid.UUID]domain.PresenceRow{}} }

func (m *memPresence) Lock(_ context.Context, id uuid.UUID, now time.Time) (domain.PresenceRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return domain.PresenceRow{}, m.err
	}
	r, ok := m.rows[id]
	if !ok {
		r = domain.PresenceRow{AgentID: id, LastHeartbeatAt: now, AnnouncedState: domain.StateUnknown}
	}
	return r, nil
}

func (m *memPresence) Save(_ context.Context, r domain.PresenceRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[r.AgentID] = r
	return nil
}

func (m *memPresence) Due(_ context.Context, before time.Time) ([]domain.PresenceRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	var out []domain.PresenceRow
	for _, r := range m.rows {
		if !r.AnnouncedAt.After(before) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memPresence) Of(_ context.Context, ids []uuid.UUID) ([]domain.PresenceRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	var out []domain.PresenceRow
	for _, id := range ids {
		if r, ok := m.rows[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// testPresenceConfig: online for a minute after a heartbeat, offline after five, at most one
// event per agent every thirty seconds.
var testPresenceConfig = app.PresenceConfig{
	Thresholds:           domain.PresenceThresholds{IdleAfter: time.Minute, OfflineAfter: 5 * time.Minute, MinInterval: 30 * time.Second},
	SweepInterval:        5 * time.Second,
	MaxBillingModeLength: 12,
}

type presenceWorld struct {
	p     *app.Presence
	store *memPresence
	log   *eventLog
	authz *authorizetest.Authorizer
	clock *clock.Fake
	agent uuid.UUID
}

func newPresenceWorld(t *testing.T) *presenceWorld {
	t.Helper()
	w := &presenceWorld{store: newMemPresence(), log: &eventLog{}, authz: &authorizetest.Authorizer{}, clock: clock.NewFake(start), agent: uuid.New()}
	var err error
	w.p, err = app.NewPresence(app.PresenceDeps{
		Tx: stagingTx{log: w.log}, Store: w.store, Appender: w.log, Authorizer: w.authz, Clock: w.clock, Config: testPresenceConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *presenceWorld) asAgent() context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: w.agent, Kind: actor.KindAgent})
}

// states returns the state of each agent.presence_changed appended so far.
func (w *presenceWorld) states(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, e := range w.log.events() {
		if e.Type != app.AgentPresenceChanged || e.ResourceKind != kernel.ResourceAgent || e.ResourceID != w.agent {
			t.Fatalf("unexpected event %+v", e)
		}
		b, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			State string `json:"state"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.State)
	}
	return out
}

func TestPresenceHeartbeatsAndSweeps(t *testing.T) {
	t.Parallel()
	w := newPresenceWorld(t)
	mode := "subscription"
	got, err := w.p.Heartbeat(w.asAgent(), &mode)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != agents.PresenceState(domain.StateOnline) || got.ReportedBillingMode != mode || !got.LastHeartbeatAt.Equal(start) {
		t.Fatalf("first heartbeat = %+v", got)
	}
	// A heartbeat inside the interval with nothing new appends nothing.
	w.clock.Advance(10 * time.Second)
	if _, err := w.p.Heartbeat(w.asAgent(), nil); err != nil {
		t.Fatal(err)
	}
	// Silent past idle_after: the sweeper announces idle, then offline, as the system.
	system := uuid.New()
	w.clock.Advance(2 * time.Minute)
	if n, err := w.p.Sweep(context.Background(), system); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want one idle event", n, err)
	}
	if n, err := w.p.Sweep(context.Background(), system); err != nil || n != 0 {
		t.Fatalf("Sweep again = %d, %v; want none", n, err)
	}
	w.clock.Advance(5 * time.Minute)
	if n, err := w.p.Sweep(context.Background(), system); err != nil || n != 1 {
		t.Fatalf("Sweep after offline_after = %d, %v", n, err)
	}
	if got, want := strings.Join(w.states(t), ","), "online,idle,offline"; got != want {
		t.Fatalf("announced %s, want %s", got, want)
	}
	if ev := w.log.events(); ev[1].ActorID != system || ev[0].ActorID != w.agent {
		t.Errorf("actors = %v, %v: want the agent for its heartbeat, the system for the sweep", ev[0].ActorID, ev[1].ActorID)
	}
	// The snapshot's view is what was announced.
	seen, err := w.p.Presences(context.Background(), []uuid.UUID{w.agent, uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[w.agent].State != agents.PresenceState(domain.StateOffline) || seen[w.agent].ReportedBillingMode != mode {
		t.Fatalf("Presences = %+v", seen)
	}
	if none, err := w.p.Presences(context.Background(), nil); err != nil || len(none) != 0 {
		t.Fatalf("Presences(nil) = %v, %v", none, err)
	}
	if w.p.SweepInterval() != testPresenceConfig.SweepInterval {
		t.Errorf("SweepInterval = %v", w.p.SweepInterval())
	}
}

func TestPresenceHoldsBackAFlappingAgent(t *testing.T) {
	t.Parallel()
	w := newPresenceWorld(t)
	if _, err := w.p.Heartbeat(w.asAgent(), nil); err != nil {
		t.Fatal(err)
	}
	// A new billing mode ten seconds later is a change, but inside agents.presence_min_interval.
	w.clock.Advance(10 * time.Second)
	mode := "metered"
	if _, err := w.p.Heartbeat(w.asAgent(), &mode); err != nil {
		t.Fatal(err)
	}
	if got := len(w.states(t)); got != 1 {
		t.Fatalf("%d events inside the interval, want the first only", got)
	}
	if n, err := w.p.Sweep(context.Background(), uuid.New()); err != nil || n != 0 {
		t.Fatalf("Sweep inside the interval = %d, %v", n, err)
	}
	w.clock.Advance(30 * time.Second)
	if n, err := w.p.Sweep(context.Background(), uuid.New()); err != nil || n != 1 {
		t.Fatalf("Sweep after the interval = %d, %v; want the held-back change", n, err)
	}
}

func TestPresenceRefusals(t *testing.T) {
	t.Parallel()
	w := newPresenceWorld(t)
	person := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindPerson})
	denied := errors.New("denied")
	tooLong, control, invalid := "a-very-long-billing-mode", "paid\x07", string([]byte{0xff})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		mode *string
		deny bool
		want error
		in   string
	}{
		{name: "no actor", ctx: context.Background(), want: problem.ErrUnauthenticated},
		{name: "a person", ctx: person, want: problem.ErrNotFound},
		{name: "refused by the authorizer", ctx: w.asAgent(), deny: true, want: denied},
		{name: "a billing mode too long", ctx: w.asAgent(), mode: &tooLong, want: problem.ErrValidation, in: "reported_billing_mode"},
		{name: "a control character", ctx: w.asAgent(), mode: &control, want: problem.ErrValidation, in: "control"},
		{name: "invalid UTF-8", ctx: w.asAgent(), mode: &invalid, want: problem.ErrValidation, in: "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newPresenceWorld(t)
			if tc.deny {
				w.authz.Rule = denyIDs(map[uuid.UUID]error{w.agent: denied})
			}
			ctx := tc.ctx
			if tc.ctx != context.Background() && tc.ctx != person {
				ctx = w.asAgent()
			}
			_, err := w.p.Heartbeat(ctx, tc.mode)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Heartbeat = %v, want %v", err, tc.want)
			}
			if tc.in != "" && !strings.Contains(err.Error(), tc.in) {
				t.Errorf("error %q does not name %q", err.Error(), tc.in)
			}
			if len(w.log.events()) != 0 || len(w.store.rows) != 0 {
				t.Errorf("a refused heartbeat left %d events and %d rows", len(w.log.events()), len(w.store.rows))
			}
		})
	}
}

func TestPresenceStoreFailures(t *testing.T) {
	t.Parallel()
	w := newPresenceWorld(t)
	w.store.err = errors.New("database gone")
	if _, err := w.p.Heartbeat(w.asAgent(), nil); !errors.Is(err, w.store.err) {
		t.Errorf("Heartbeat = %v", err)
	}
	if _, err := w.p.Sweep(context.Background(), uuid.New()); !errors.Is(err, w.store.err) {
		t.Errorf("Sweep = %v", err)
	}
	if _, err := w.p.Presences(context.Background(), []uuid.UUID{w.agent}); !errors.Is(err, w.store.err) {
		t.Errorf("Presences = %v", err)
	}
	failing := failingAppender{err: errors.New("log full")}
	p, err := app.NewPresence(app.PresenceDeps{
		Tx: stagingTx{log: &eventLog{}}, Store: newMemPresence(), Appender: failing, Authorizer: &authorizetest.Authorizer{}, Clock: clock.NewFake(start), Config: testPresenceConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Heartbeat(w.asAgent(), nil); !errors.Is(err, failing.err) {
		t.Errorf("Heartbeat with a failing appender = %v", err)
	}
}

func TestNewPresenceRefusesMissingDepsAndBadConfig(t *testing.T) {
	t.Parallel()
	if _, err := app.NewPresence(app.PresenceDeps{Config: testPresenceConfig}); err == nil ||
		!strings.Contains(err.Error(), "presence store is nil") || !strings.Contains(err.Error(), "clock is nil") {
		t.Errorf("NewPresence without deps = %v", err)
	}
	for key, change := range map[string]func(*app.PresenceConfig){
		app.KeyPresenceIdleAfter.Name:     func(c *app.PresenceConfig) { c.Thresholds.IdleAfter = 0 },
		app.KeyPresenceOfflineAfter.Name:  func(c *app.PresenceConfig) { c.Thresholds.OfflineAfter = c.Thresholds.IdleAfter },
		app.KeyPresenceMinInterval.Name:   func(c *app.PresenceConfig) { c.Thresholds.MinInterval = -time.Second },
		app.KeyPresenceSweepInterval.Name: func(c *app.PresenceConfig) { c.SweepInterval = 0 },
		app.KeyMaxBillingModeLength.Name:  func(c *app.PresenceConfig) { c.MaxBillingModeLength = 0 },
	} {
		c := testPresenceConfig
		change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate with %s out of range = %v", key, err)
		}
	}
}

func TestPresenceConfigFrom(t *testing.T) {
	t.Parallel()
	r := config.NewRegister()
	for _, k := range []config.Key{app.KeyPresenceIdleAfter, app.KeyPresenceOfflineAfter, app.KeyPresenceMinInterval, app.KeyPresenceSweepInterval, app.KeyMaxBillingModeLength} {
		r.Define(k.Name, k.Kind, k.Default, k.Meaning)
	}
	cfg, err := r.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := app.PresenceConfigFrom(cfg)
	if err := cfg.Err(); err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	if got.Thresholds.IdleAfter <= 0 || got.Thresholds.OfflineAfter <= got.Thresholds.IdleAfter || got.MaxBillingModeLength < 1 {
		t.Errorf("PresenceConfigFrom = %+v", got)
	}
}
