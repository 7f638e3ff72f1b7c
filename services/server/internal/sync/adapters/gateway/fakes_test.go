package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	gosync "sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/sync/domain"
)

// The world of the unit tests: the spaces Support (channel help) and Marketing (channel
// news); Alex reads help, Sam reads help and news, Robin reads nothing; Helper is an agent
// that reads help. A pending device of Sam and an app without events:subscribe exist too.
var (
	alex   = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000a1e0")
	sam    = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000a2e0")
	robin  = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000a3e0")
	helper = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000a4e0")
	app    = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000a5e0")

	support   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000005a1")
	marketing = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000005a2")
	help      = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000000c1")
	news      = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000000c2")

	epoch = uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000e0c0")

	errFake = errors.New("fake dependency failed")
)

// tokens maps the bearer tokens of the tests to their actors.
var tokens = map[string]actor.Actor{
	"alex-token":    {PrincipalID: alex, Kind: actor.KindPerson},
	"sam-token":     {PrincipalID: sam, Kind: actor.KindPerson},
	"robin-token":   {PrincipalID: robin, Kind: actor.KindPerson},
	"helper-token":  {PrincipalID: helper, Kind: actor.KindAgent},
	"pending-token": {PrincipalID: sam, Kind: actor.KindPerson, DevicePending: true},
	"app-token":     {PrincipalID: app, Kind: actor.KindApp},
	"sam-phone":     {PrincipalID: sam, Kind: actor.KindPerson, TokenID: samPhone},
	"alex-laptop":   {PrincipalID: alex, Kind: actor.KindPerson, TokenID: alexLaptop},
	"sam-expiring":  {PrincipalID: sam, Kind: actor.KindPerson, TokenID: samExpiring, ExpiresAt: tokenExpiry},
}

// The token ids of the tokens the credential recheck is tested with.
var (
	samPhone   = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070e1")
	alexLaptop = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070e2")
	// samExpiring is the token ("sam-expiring") that expires at tokenExpiry.
	samExpiring = uuid.MustParse("0193a1c2-7c00-7a01-8000-0000000070e3")
)

// tokenExpiry is when the token "sam-expiring" expires; the tests of expiry move a fake clock
// to it.
var tokenExpiry = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fakeCredentials is identity's batched credential check: ended says which tokens no longer
// authenticate; every call's token ids are recorded.
type fakeCredentials struct {
	mu    gosync.Mutex
	ended map[uuid.UUID]gateway.CredentialEnd
	calls [][]uuid.UUID
}

func (f *fakeCredentials) Ended(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]gateway.CredentialEnd, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, slices.Clone(ids))
	out := map[uuid.UUID]gateway.CredentialEnd{}
	for _, id := range ids {
		if e, ok := f.ended[id]; ok {
			out[id] = e
		}
	}
	return out, nil
}

func (f *fakeCredentials) end(id uuid.UUID, e gateway.CredentialEnd) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended == nil {
		f.ended = map[uuid.UUID]gateway.CredentialEnd{}
	}
	f.ended[id] = e
}

func (f *fakeCredentials) callsSoFar() [][]uuid.UUID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fakeFailedAuth records the addresses of the failed authentications counted.
type fakeFailedAuth struct {
	mu     gosync.Mutex
	failed []string
}

func (f *fakeFailedAuth) Address(r *http.Request) string {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return host
}

func (f *fakeFailedAuth) Failed(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = append(f.failed, addr)
}

func (f *fakeFailedAuth) count() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.failed)
}

// fakeAuthenticator is identity.Authenticator over tokens.
type fakeAuthenticator struct {
	fail    bool
	failErr error // returned for every token, when set
}

func (f *fakeAuthenticator) Authenticate(_ context.Context, token string) (actor.Actor, error) {
	if f.failErr != nil {
		return actor.Actor{}, f.failErr
	}
	if f.fail {
		return actor.Actor{}, errFake
	}
	a, ok := tokens[token]
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	return a, nil
}

// fakeHeartbeats records the heartbeat frames handed to the agents module; err, when set, is
// what every one answers.
type fakeHeartbeats struct {
	mu    gosync.Mutex
	err   error
	calls []heartbeatCall
}

// heartbeatCall is one recorded heartbeat: the actor of its context and the billing mode.
type heartbeatCall struct {
	principal uuid.UUID
	mode      string
	hasMode   bool
}

func (f *fakeHeartbeats) Heartbeat(ctx context.Context, mode string, hasMode bool) error {
	a, _ := actor.From(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.calls = append(f.calls, heartbeatCall{principal: a.PrincipalID, mode: mode, hasMode: hasMode})
	return nil
}

func (f *fakeHeartbeats) recorded() []heartbeatCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeHeartbeats) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// fakeLog is the event log: the reader of the tail, catch-up's log and versions. Seq n is at
// index n-1 - dropped.
type fakeLog struct {
	mu      gosync.Mutex
	events  []domain.StoredEvent
	head    int64
	horizon int64
	epoch   uuid.UUID
	reads   int // EventsAfter calls
}

func (l *fakeLog) add(events ...domain.StoredEvent) []domain.StoredEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]domain.StoredEvent, len(events))
	for i, e := range events {
		l.head++
		e.Seq = l.head
		e.ID = uuid.Must(uuid.NewV7())
		e.OccurredAt = time.Date(2026, 12, 1, 9, 30, 0, int(e.Seq)*1000, time.UTC)
		if e.Payload == nil {
			e.Payload = json.RawMessage(`{"n":` + strconv.FormatInt(e.Seq, 10) + `}`)
		}
		l.events = append(l.events, e)
		out[i] = e
	}
	return out
}

// drop removes every event up to through, as retention does.
func (l *fakeLog) drop(through int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = slices.DeleteFunc(l.events, func(e domain.StoredEvent) bool { return e.Seq <= through })
	l.horizon = max(l.horizon, through)
}

func (l *fakeLog) lastSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

func (l *fakeLog) EventsAfter(_ context.Context, after int64, limit int) ([]domain.StoredEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	var out []domain.StoredEvent
	for _, e := range l.events {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *fakeLog) EventSeq(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head, nil
}

func (l *fakeLog) SyncEpoch(context.Context) (uuid.UUID, error) { return l.epoch, nil }

func (l *fakeLog) MinRetainedSeq(context.Context) (int64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) == 0 {
		return l.horizon + 1, false, nil
	}
	return max(l.events[0].Seq, l.horizon+1), true, nil
}

func (l *fakeLog) CatchUpPage(_ context.Context, q domain.PageQuery) (domain.PageRows, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rows := domain.PageRows{HorizonSeq: l.horizon, Events: []domain.StoredEvent{}}
	for _, e := range l.events {
		if e.Seq <= q.After || e.Seq > q.Through || !q.Filter.Match(e) {
			continue
		}
		rows.Events = append(rows.Events, e)
		if len(rows.Events) == q.Limit {
			break
		}
	}
	return rows, nil
}

// fakeListener wakes the tail when a test appended.
type fakeListener struct{ heads chan int64 }

func (f *fakeListener) Listen(ctx context.Context, ready func(), notify func(int64)) error {
	ready()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case h := <-f.heads:
			notify(h)
		}
	}
}

// fakeAuthz is authz.Authorizer's two faces the gateway uses: the Decider of catch-up and
// live delivery (a channel is readable when it is granted, the instance always) and the
// admission decision (events.catch_up: pending devices and the app are refused). Its
// permission version rises with every change of grants.
type fakeAuthz struct {
	mu       gosync.Mutex
	version  int64
	channels map[uuid.UUID][]uuid.UUID
	failFor  bool
}

func newFakeAuthz() *fakeAuthz {
	return &fakeAuthz{version: 1, channels: map[uuid.UUID][]uuid.UUID{
		alex:   {help},
		sam:    {help, news},
		helper: {help},
	}}
}

// revoke takes the channel from the principal and returns the new permission version.
func (a *fakeAuthz) revoke(principal, channel uuid.UUID) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.channels[principal] = slices.DeleteFunc(slices.Clone(a.channels[principal]), func(c uuid.UUID) bool { return c == channel })
	a.version++
	return a.version
}

func (a *fakeAuthz) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	who, ok := actor.From(ctx)
	switch {
	case !ok:
		return problem.ErrUnauthenticated
	case who.DevicePending:
		return problem.ErrDevicePending
	case who.Kind == actor.KindApp:
		return problem.ErrForbidden
	case action != kernel.ActionEventsCatchUp || res.Kind != kernel.ResourceInstance:
		return fmt.Errorf("unexpected decision %s on %v", action, res)
	}
	return nil
}

func (a *fakeAuthz) ForActor(ctx context.Context) (authz.Decider, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return nil, problem.ErrUnauthenticated
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failFor {
		return nil, errFake
	}
	channels := slices.Clone(a.channels[who.PrincipalID])
	var grants []authz.Grant
	spaces := map[uuid.UUID]uuid.UUID{}
	for _, c := range channels {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceChannel, ResourceID: c, Role: authz.RoleMember})
		spaces[c] = spaceOf(c)
	}
	return &fakeDecider{channels: channels, scope: authz.NewScope(who.PrincipalID, a.version, grants, spaces)}, nil
}

func spaceOf(channel uuid.UUID) uuid.UUID {
	if channel == news {
		return marketing
	}
	return support
}

type fakeDecider struct {
	channels []uuid.UUID
	scope    authz.Scope
}

func (d *fakeDecider) Scope() authz.Scope                  { return d.scope }
func (d *fakeDecider) Level(authorize.Resource) authz.Role { return "" }
func (d *fakeDecider) Authorize(_ context.Context, _ kernel.Action, res authorize.Resource) error {
	if res.ChannelID != uuid.Nil && slices.Contains(d.channels, res.ChannelID) {
		return nil
	}
	return problem.ErrNotFound
}

// fakeDirectory names the principals and counts its queries.
type fakeDirectory struct {
	mu      gosync.Mutex
	queries int
	fail    bool
	failErr error // what fail returns instead of errFake, when set
}

func (d *fakeDirectory) Refs(_ context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queries++
	if d.fail && d.failErr != nil {
		return nil, d.failErr
	}
	if d.fail {
		return nil, errFake
	}
	names := map[uuid.UUID]string{alex: "Alex", sam: "Sam", robin: "Robin", helper: "Helper"}
	out := map[uuid.UUID]identity.PrincipalRef{}
	for _, id := range ids {
		if n, ok := names[id]; ok {
			out[id] = identity.PrincipalRef{ID: id, Kind: actor.KindPerson, DisplayName: n}
		}
	}
	return out, nil
}

func (d *fakeDirectory) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries
}

// fakeSnapshot builds a snapshot of the head and the epoch, read from the log.
type fakeSnapshot struct {
	log   *fakeLog
	fail  error
	panic bool // Build panics (a bug in a port)
}

func (f *fakeSnapshot) Build(ctx context.Context) (syncmod.SnapshotView, error) {
	if f.panic {
		panic("fake snapshot: boom")
	}
	if f.fail != nil {
		return syncmod.SnapshotView{}, f.fail
	}
	who, _ := actor.From(ctx)
	head, _ := f.log.EventSeq(ctx)
	return syncmod.SnapshotView{HeadSeq: head, SyncEpoch: f.log.epoch, Principal: identity.PrincipalRef{ID: who.PrincipalID}}, nil
}

// encodeSnapshot stands for the HTTP adapter's mapping.
func encodeSnapshot(v syncmod.SnapshotView) ([]byte, error) {
	return json.Marshal(map[string]any{"head_seq": v.HeadSeq, "sync_epoch": v.SyncEpoch, "principal": map[string]any{"id": v.Principal.ID}})
}

// The events of the tests.

func message(channel uuid.UUID, by uuid.UUID) domain.StoredEvent {
	return domain.StoredEvent{
		Type: "message.created", ActorID: by, SpaceID: spaceOf(channel), ChannelID: channel,
		ThreadID: uuid.Must(uuid.NewV7()), ResourceKind: kernel.ResourceMessage, ResourceID: uuid.Must(uuid.NewV7()),
		ReceiveAction: kernel.ActionThreadRead,
	}
}

func personal(audience uuid.UUID) domain.StoredEvent {
	return domain.StoredEvent{
		Type: "setting.updated", ActorID: audience, ResourceKind: kernel.ResourcePrincipal, ResourceID: audience,
		AudienceID: audience, Payload: json.RawMessage(`{"key":"theme","value":"dark","version":1}`),
	}
}

func permissionsChanged(audience uuid.UUID, version int64) domain.StoredEvent {
	e := personal(audience)
	e.Type = "permissions.changed"
	e.Payload = json.RawMessage(fmt.Sprintf(`{"principal_id":%q,"permission_version":%d}`, audience, version))
	return e
}

// visibleTo is the test's own statement of what a principal sees of events (the fake
// policy as it stands now), to compare with what the gateway delivered.
func visibleTo(a *fakeAuthz, principal uuid.UUID, events []domain.StoredEvent) []int64 {
	a.mu.Lock()
	channels := slices.Clone(a.channels[principal])
	a.mu.Unlock()
	var out []int64
	for _, e := range events {
		if e.Personal() && e.AudienceID == principal || !e.Personal() && slices.Contains(channels, e.ChannelID) {
			out = append(out, e.Seq)
		}
	}
	return out
}
