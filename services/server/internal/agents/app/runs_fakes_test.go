package app_test

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// The hand-written fakes of the runs use cases' ports: an in-memory store, thread places,
// a directory, an authorizer deciding from a table, an appender and a transactor that stage
// the store's writes and the events and keep them only when fn succeeds.

// memRuns is an in-memory app.RunStore; RunForUpdate records the ids it locked.
type memRuns struct {
	mu     sync.Mutex
	runs   map[uuid.UUID]domain.Run
	order  []uuid.UUID
	locked []uuid.UUID
	// filters are the prefilters RunsInProgress was asked with.
	filters []app.RunFilter
	// staleErr, when set, is StaleRuns' error.
	staleErr error
}

func newMemRuns() *memRuns { return &memRuns{runs: map[uuid.UUID]domain.Run{}} }

func (m *memRuns) InsertRun(_ context.Context, r domain.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[r.ID] = r
	m.order = append(m.order, r.ID)
	return nil
}

func (m *memRuns) Run(_ context.Context, id uuid.UUID) (domain.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return domain.Run{}, problem.ErrNotFound
	}
	return r, nil
}

func (m *memRuns) RunForUpdate(ctx context.Context, id uuid.UUID) (domain.Run, error) {
	m.mu.Lock()
	m.locked = append(m.locked, id)
	m.mu.Unlock()
	return m.Run(ctx, id)
}

func (m *memRuns) UpdateRun(_ context.Context, r domain.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[r.ID] = r
	return nil
}

// StaleRuns is the store's query over the map: the runs in progress updated before
// updatedBefore, in creation order, at most limit, each recorded as locked. stale, when set,
// fails it.
func (m *memRuns) StaleRuns(_ context.Context, updatedBefore time.Time, limit int) ([]domain.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.staleErr != nil {
		return nil, m.staleErr
	}
	var out []domain.Run
	for _, id := range m.order {
		if r := m.runs[id]; !r.State.Final() && r.UpdatedAt.Before(updatedBefore) && len(out) < limit {
			out = append(out, r)
			m.locked = append(m.locked, id)
		}
	}
	return out, nil
}

func (m *memRuns) RunsInProgress(_ context.Context, f app.RunFilter) ([]domain.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.filters = append(m.filters, f)
	var out []domain.Run
	for _, id := range m.order {
		if r := m.runs[id]; !r.State.Final() && f.Admits(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// fakePlaces knows the threads it was given.
type fakePlaces map[uuid.UUID]app.ThreadPlace

func (f fakePlaces) Thread(_ context.Context, id uuid.UUID) (app.ThreadPlace, error) {
	p, ok := f[id]
	if !ok {
		return app.ThreadPlace{}, problem.ErrNotFound
	}
	return p, nil
}

// fakeDirectory names the principals it was given.
type fakeDirectory map[uuid.UUID]identity.PrincipalRef

func (f fakeDirectory) Ref(_ context.Context, id uuid.UUID) (identity.PrincipalRef, error) {
	r, ok := f[id]
	if !ok {
		return identity.PrincipalRef{}, identity.ErrPrincipalNotFound
	}
	return r, nil
}

func (f fakeDirectory) Refs(context.Context, []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	panic("not used by runs")
}

func (f fakeDirectory) ActiveRefs(context.Context, []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	panic("not used by runs")
}

func (f fakeDirectory) ByHandles(context.Context, []string) (map[string]identity.PrincipalRef, error) {
	panic("not used by runs")
}

// decisionKey is one decision of tableAuthorizer: an action on a resource id.
type decisionKey struct {
	action kernel.Action
	id     uuid.UUID
}

// authzCall is one decision tableAuthorizer saw.
type authzCall struct {
	action kernel.Action
	res    authorize.Resource
	filter bool
}

// tableAuthorizer allows everything but the decisions in deny, which get their error, and
// lets MayRead answer true only for the principals in readers; it records every decision.
type tableAuthorizer struct {
	deny    map[decisionKey]error
	readers map[uuid.UUID]bool
	// scope is what every Decider's Scope answers.
	scope authz.Scope

	mu    sync.Mutex
	calls []authzCall
}

var _ authz.Authorizer = (*tableAuthorizer)(nil)

func (a *tableAuthorizer) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, authzCall{action: action, res: res, filter: authorize.IsFilter(ctx)})
	return a.deny[decisionKey{action, res.ID}]
}

func (a *tableAuthorizer) Scope(context.Context, uuid.UUID) (authz.Scope, error) {
	return authz.Scope{}, nil
}

func (a *tableAuthorizer) ForActor(context.Context) (authz.Decider, error) {
	return tableDecider{a}, nil
}

func (a *tableAuthorizer) MayRead(_ context.Context, principalID uuid.UUID, _ authorize.Resource) (bool, error) {
	return a.readers[principalID], nil
}

func (a *tableAuthorizer) seen() []authzCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]authzCall(nil), a.calls...)
}

// tableDecider decides like its tableAuthorizer.
type tableDecider struct{ a *tableAuthorizer }

func (d tableDecider) Scope() authz.Scope { return d.a.scope }

func (d tableDecider) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	return d.a.Authorize(ctx, action, res)
}

func (d tableDecider) Level(authorize.Resource) authz.Role { return "" }

// stagingTx runs fn with a staging appender and keeps the staged events only when fn
// succeeds; the store is in memory, so the tests check that nothing is stored on failure by
// reading the store's state through the use cases.
type stagingTx struct {
	log *eventLog
}

func (s stagingTx) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	s.log.begin()
	if err := fn(ctx); err != nil {
		s.log.rollback()
		return err
	}
	s.log.commit()
	return nil
}

// eventLog is the appender of the runs tests: events appended in a transaction are kept at
// its commit and dropped at its rollback.
type eventLog struct {
	mu        sync.Mutex
	staged    []kernel.Event
	committed []kernel.Event
}

func (l *eventLog) Append(_ context.Context, events ...kernel.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.staged = append(l.staged, events...)
	return nil
}

func (l *eventLog) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.staged = nil
}

func (l *eventLog) rollback() { l.begin() }

func (l *eventLog) commit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.committed = append(l.committed, l.staged...)
	l.staged = nil
}

func (l *eventLog) events() []kernel.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]kernel.Event(nil), l.committed...)
}
