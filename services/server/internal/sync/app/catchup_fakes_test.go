package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// The people and places of the catch-up tests: Alex reads Support, Sam reads Support and
// Marketing, Robin reads nothing.
var (
	cuAlex  = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0a01")
	cuSam   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0a02")
	cuRobin = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0a03")
	cuBot   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0a04") // an agent that reads Support

	cuSupport   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c05a1")
	cuMarketing = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c05a2")
	cuHelp      = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0c01") // channel of Support
	cuNews      = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000c0c02") // channel of Marketing

	cuEpoch    = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000ce001")
	cuOldEpoch = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000ce000")

	cuAt = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

	errCU = errors.New("catch-up dependency failed")
)

// cuTestConfig is a small, valid catch-up configuration.
var cuTestConfig = app.CatchUpConfig{PageSize: 50, ScanWindow: 1000, MaxEvents: 10_000, RetryBase: time.Second}

// cuLog is the event log behind CatchUpLog and CatchUpVersions: seq n sits at index n-1 unless
// retention dropped it. With loose set, CatchUpPage ignores the prefilter and returns every
// row of the window, so tests can prove that the per-row rule, not the SQL, is the truth.
type cuLog struct {
	mu      gosync.Mutex
	events  []domain.StoredEvent
	head    int64 // the event_seq counter; may run ahead of the events
	horizon int64 // the retention horizon: seqs at or below it are gone
	epoch   uuid.UUID
	loose   bool
	// raiseHorizonOnPage, when above 0, is the horizon retention reaches while the next
	// page is read (retention overtaking a reader).
	raiseHorizonOnPage int64

	failHead, failEpoch, failMin, failPage bool
	queries                                []domain.PageQuery
	order                                  []string // the reads in the order they happened
	// releasing, when set, gives every page rows of their own with a Release that counts in
	// releases and then overwrites the payloads it handed out, as a reused buffer would.
	releasing bool
	releases  int
}

func newCULog() *cuLog {
	return &cuLog{epoch: cuEpoch}
}

// add appends events with the next seqs and returns the last one.
func (l *cuLog) add(events ...domain.StoredEvent) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range events {
		l.head++
		e.Seq = l.head
		if e.ID == uuid.Nil {
			e.ID = uuid.Must(uuid.NewV7())
		}
		if e.OccurredAt.IsZero() {
			e.OccurredAt = cuAt.Add(time.Duration(e.Seq) * time.Millisecond)
		}
		if e.Payload == nil {
			e.Payload = json.RawMessage(`{"n":` + itoa(e.Seq) + `}`)
		}
		l.events = append(l.events, e)
	}
	return l.head
}

// drop removes every event with seq <= through, as retention would.
func (l *cuLog) drop(through int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = slices.DeleteFunc(l.events, func(e domain.StoredEvent) bool { return e.Seq <= through })
	l.horizon = max(l.horizon, through)
}

func (l *cuLog) EventSeq(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = append(l.order, "head")
	if l.failHead {
		return 0, errCU
	}
	return l.head, nil
}

func (l *cuLog) SyncEpoch(context.Context) (uuid.UUID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = append(l.order, "epoch")
	if l.failEpoch {
		return uuid.Nil, errCU
	}
	return l.epoch, nil
}

func (l *cuLog) MinRetainedSeq(context.Context) (int64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = append(l.order, "min")
	if l.failMin {
		return 0, false, errCU
	}
	if len(l.events) == 0 {
		return l.horizon + 1, false, nil
	}
	return max(l.events[0].Seq, l.horizon+1), true, nil
}

func (l *cuLog) CatchUpPage(_ context.Context, q domain.PageQuery) (domain.PageRows, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = append(l.order, "page")
	l.queries = append(l.queries, q)
	if l.failPage {
		return domain.PageRows{}, errCU
	}
	if l.raiseHorizonOnPage > 0 {
		through := l.raiseHorizonOnPage
		l.raiseHorizonOnPage = 0
		l.events = slices.DeleteFunc(l.events, func(e domain.StoredEvent) bool { return e.Seq <= through })
		l.horizon = max(l.horizon, through)
	}
	rows := domain.PageRows{HorizonSeq: l.horizon}
	for _, e := range l.events {
		if e.Seq <= q.After || e.Seq > q.Through {
			continue
		}
		if !l.loose && !q.Filter.Match(e) {
			continue
		}
		rows.Events = append(rows.Events, e)
		if len(rows.Events) == q.Limit {
			break
		}
	}
	if l.releasing {
		for i := range rows.Events {
			rows.Events[i].Payload = slices.Clone(rows.Events[i].Payload)
		}
		handed := rows.Events
		rows.Release = func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.releases++
			for _, e := range handed {
				for j := range e.Payload {
					e.Payload[j] = 'x'
				}
			}
		}
	}
	return rows, nil
}

// pageQueries returns the queries made so far.
func (l *cuLog) pageQueries() []domain.PageQuery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.queries)
}

// cuReader is what one principal may read in the fake policy.
type cuReader struct {
	kind         actor.Kind
	instanceWide bool
	spaces       []uuid.UUID // space grants: every channel in them
	channels     []uuid.UUID // channel grants
	channelSpace map[uuid.UUID]uuid.UUID
	agents       bool // may read agents
}

// cuAuthz is the DeciderSource: a Decider per actor over a fake policy (a thing is readable
// when its channel or space is granted, or the reader is instance-wide; agents when agents is
// set; the instance always). Every decision is recorded with whether it ran in filter mode.
type cuAuthz struct {
	mu        gosync.Mutex
	readers   map[uuid.UUID]cuReader
	decisions []cuDecision
	failOn    uuid.UUID // a resource id whose decision fails with errCU
	forbidOn  uuid.UUID // a resource id whose decision is forbidden (visible, not allowed)
	failFor   bool      // ForActor fails
	// known records, per ForActor call, the permission version the context carried
	// (authz.WithPermissionVersion), or -1 without one.
	known []int64
}

type cuDecision struct {
	action kernel.Action
	res    authorize.Resource
	filter bool
}

func newCUAuthz() *cuAuthz {
	return &cuAuthz{readers: map[uuid.UUID]cuReader{
		cuAlex:  {kind: actor.KindPerson, channels: []uuid.UUID{cuHelp}, channelSpace: map[uuid.UUID]uuid.UUID{cuHelp: cuSupport}},
		cuSam:   {kind: actor.KindPerson, spaces: []uuid.UUID{cuSupport, cuMarketing}, agents: true},
		cuRobin: {kind: actor.KindPerson},
		cuBot:   {kind: actor.KindAgent, spaces: []uuid.UUID{cuSupport}},
	}}
}

func (a *cuAuthz) ForActor(ctx context.Context) (authz.Decider, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return nil, problem.ErrUnauthenticated
	}
	if a.failFor {
		return nil, errCU
	}
	a.mu.Lock()
	r := a.readers[who.PrincipalID]
	if v, ok := authz.KnownPermissionVersion(ctx); ok {
		a.known = append(a.known, v)
	} else {
		a.known = append(a.known, -1)
	}
	a.mu.Unlock()
	var grants []authz.Grant
	if r.instanceWide {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceInstance, ResourceID: cuEpoch, Role: authz.RoleViewer})
	}
	for _, s := range r.spaces {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceSpace, ResourceID: s, Role: authz.RoleMember})
	}
	for _, c := range r.channels {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceChannel, ResourceID: c, Role: authz.RoleMember})
	}
	return &cuDecider{a: a, r: r, scope: authz.NewScope(who.PrincipalID, 7, grants, r.channelSpace)}, nil
}

// recorded returns the decisions made so far.
func (a *cuAuthz) recorded() []cuDecision {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.decisions)
}

type cuDecider struct {
	a     *cuAuthz
	r     cuReader
	scope authz.Scope
}

func (d *cuDecider) Scope() authz.Scope { return d.scope }

func (d *cuDecider) Level(authorize.Resource) authz.Role { return "" }

func (d *cuDecider) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	d.a.mu.Lock()
	d.a.decisions = append(d.a.decisions, cuDecision{action: action, res: res, filter: authorize.IsFilter(ctx)})
	failOn, forbidOn := d.a.failOn, d.a.forbidOn
	d.a.mu.Unlock()
	switch {
	case res.ID != uuid.Nil && res.ID == failOn:
		return errCU
	case res.ID != uuid.Nil && res.ID == forbidOn:
		return problem.ErrForbidden
	case d.r.mayRead(res):
		return nil
	}
	return problem.ErrNotFound
}

// mayRead is the fake policy.
func (r cuReader) mayRead(res authorize.Resource) bool {
	switch res.Kind {
	case kernel.ResourceInstance:
		return true
	case kernel.ResourceAgent:
		return r.agents || r.instanceWide
	}
	if r.instanceWide {
		return true
	}
	if res.ChannelID != uuid.Nil && slices.Contains(r.channels, res.ChannelID) {
		return true
	}
	return res.SpaceID != uuid.Nil && slices.Contains(r.spaces, res.SpaceID) ||
		res.Kind == kernel.ResourceSpace && slices.Contains(r.spaces, res.ID)
}

// cuDirectory is PrincipalRefs: it names every principal it knows and counts the calls.
type cuDirectory struct {
	mu    gosync.Mutex
	refs  map[uuid.UUID]identity.PrincipalRef
	calls [][]uuid.UUID
	fail  bool
}

func newCUDirectory() *cuDirectory {
	return &cuDirectory{refs: map[uuid.UUID]identity.PrincipalRef{
		cuAlex: {ID: cuAlex, Kind: actor.KindPerson, DisplayName: "Alex", Handle: "alex"},
		cuSam:  {ID: cuSam, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"},
		cuBot:  {ID: cuBot, Kind: actor.KindAgent, DisplayName: "Helper", Handle: "helper"},
	}}
}

func (d *cuDirectory) Refs(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, slices.Clone(ids))
	if d.fail {
		return nil, errCU
	}
	out := map[uuid.UUID]identity.PrincipalRef{}
	for _, id := range ids {
		if r, ok := d.refs[id]; ok {
			out[id] = r
		}
	}
	return out, nil
}

func (d *cuDirectory) recordedCalls() [][]uuid.UUID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// cuEnv is one catch-up under test with its fakes.
type cuEnv struct {
	log   *cuLog
	authz *cuAuthz
	dir   *cuDirectory
	cu    *app.CatchUp
}

func newCUEnv(t *testing.T, cfg app.CatchUpConfig) cuEnv {
	t.Helper()
	e := cuEnv{log: newCULog(), authz: newCUAuthz(), dir: newCUDirectory()}
	cu, err := app.NewCatchUp(app.CatchUpDeps{
		Log: e.log, Versions: e.log, Authorizer: e.authz, Directory: e.dir, Config: cfg,
		Rand: func() float64 { return 0.5 },
	})
	if err != nil {
		t.Fatalf("NewCatchUp: %v", err)
	}
	e.cu = cu
	return e
}

// cuAs returns a context whose actor is the principal, of the kind the fake policy knows.
func (e cuEnv) as(principalID uuid.UUID) context.Context {
	kind := e.authz.readers[principalID].kind
	if kind == "" {
		kind = actor.KindPerson
	}
	return actor.With(context.Background(), actor.Actor{PrincipalID: principalID, Kind: kind})
}

// The events of the tests, placed as the register places them.

func cuMessage(space, channel uuid.UUID, by uuid.UUID) domain.StoredEvent {
	return domain.StoredEvent{
		Type: "message.created", ActorID: by, SpaceID: space, ChannelID: channel, ThreadID: uuid.Must(uuid.NewV7()),
		ResourceKind: kernel.ResourceMessage, ResourceID: uuid.Must(uuid.NewV7()), ReceiveAction: kernel.ActionThreadRead,
	}
}

func cuPersonal(typ string, audience, space, channel uuid.UUID) domain.StoredEvent {
	e := domain.StoredEvent{Type: typ, ActorID: audience, SpaceID: space, ChannelID: channel, AudienceID: audience}
	switch {
	case channel != uuid.Nil && typ == "read_state.updated":
		e.ThreadID = uuid.Must(uuid.NewV7())
		e.ResourceKind, e.ResourceID = kernel.ResourceThread, e.ThreadID
	case channel != uuid.Nil:
		e.ResourceKind, e.ResourceID = kernel.ResourceChannel, channel
	default:
		e.ResourceKind, e.ResourceID = kernel.ResourcePrincipal, audience
	}
	return e
}

func cuAgentCreated(by uuid.UUID) domain.StoredEvent {
	return domain.StoredEvent{
		Type: "agent.created", ActorID: by, ResourceKind: kernel.ResourceAgent, ResourceID: uuid.Must(uuid.NewV7()),
		ReceiveAction: kernel.ActionAgentRead,
	}
}

// cuEnvelope is what a test reads back from an encoded envelope.
type cuEnvelope struct {
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Actor struct {
		ID          uuid.UUID `json:"id"`
		DisplayName string    `json:"display_name"`
	} `json:"actor"`
	TraceContext json.RawMessage `json:"trace_context"`
}

func cuDecode(t *testing.T, raw []json.RawMessage) []cuEnvelope {
	t.Helper()
	out := make([]cuEnvelope, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("envelope %s: %v", r, err)
		}
	}
	return out
}

func cuSeqs(envs []cuEnvelope) []int64 {
	out := make([]int64, len(envs))
	for i, e := range envs {
		out[i] = e.Seq
	}
	return out
}
