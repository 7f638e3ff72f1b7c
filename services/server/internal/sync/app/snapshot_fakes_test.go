package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

// The principals, places and things of the snapshot tests; every name starts with snap so
// that it cannot clash with the other tests of the package.
var (
	snapAlex   = uuid.MustParse("0193b2c3-7c00-7a01-8000-0000000a1e01")
	snapSam    = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000005a302")
	snapRobin  = uuid.MustParse("0193b2c3-7c00-7a01-8000-0000000b0b03")
	snapHelper = uuid.MustParse("0193b2c3-7c00-7a01-8000-0000000a6e04") // an agent
	snapBot    = uuid.MustParse("0193b2c3-7c00-7a01-8000-0000000a9905") // an app

	snapInstanceID = uuid.MustParse("0193b2c3-7c00-7a01-8000-000000000001")
	snapEpoch      = uuid.MustParse("0193b2c3-7c00-7a01-8000-0000000000e1")

	snapSupport   = uuid.MustParse("0193b2c3-7c00-7a01-8000-000000005a01") // Alex: member of the space
	snapMarketing = uuid.MustParse("0193b2c3-7c00-7a01-8000-000000005a02") // Alex: a grant on launch only
	snapOldSpace  = uuid.MustParse("0193b2c3-7c00-7a01-8000-000000005a03") // archived; Alex: member

	snapTickets    = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c001") // Support
	snapBilling    = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c002") // Support
	snapOldTickets = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c003") // Support, archived
	snapLaunch     = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c004") // Marketing
	snapSecret     = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c005") // Marketing, Sam only
	snapInOld      = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000c006") // the archived space
	snapDMAlexSam  = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000d001")
	snapDMSamRobin = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000d002")
	snapNowhere    = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000dead") // no channel at all

	snapT1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a001") // tickets: 3 unread, 1 mention
	snapT2   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a002") // tickets: all below the floor
	snapT3   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a003") // tickets: read, a late mention
	snapT4   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a004") // tickets: floor above the read state
	snapB1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a005") // billing: never read
	snapH1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a006") // billing: thread.read denied
	snapL1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a007") // launch: read
	snapS1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a008") // secret
	snapD1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a009") // Alex and Sam
	snapR1   = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a00a") // Sam and Robin
	snapOld1 = uuid.MustParse("0193b2c3-7c00-7a01-8000-00000000a00b") // the archived channel

	snapCreated = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
)

// snapDraftText is the text of every draft of the fixed world: no snapshot may contain it.
const snapDraftText = "Lunch at noon? Alex"

// snapGrants are one principal's grants: its role on the instance, on spaces and on channels.
type snapGrants struct {
	instance authz.Role
	spaces   map[uuid.UUID]authz.Role
	channels map[uuid.UUID]authz.Role
}

// snapMention is one mention of a principal in a message with seq of a thread.
type snapMention struct {
	principal, thread, channel uuid.UUID
	seq                        int64
}

// snapDecision is one question put to the fake Decider.
type snapDecision struct {
	action kernel.Action
	res    authorize.Resource
	filter bool
}

// snapWorld is the state behind every fake source of the snapshot: one value answers them
// all (the two List methods through snapSpaces and snapAgents), records each call by name in
// order, and fails or panics on the calls the test names. It is safe for concurrent builds.
type snapWorld struct {
	mu sync.Mutex

	head  int64
	epoch uuid.UUID
	pv    int64
	info  instance.Info
	refs  map[uuid.UUID]identity.PrincipalRef

	spaces   []chat.Space
	channels []chat.Channel
	grants   map[uuid.UUID]snapGrants
	threads  []chat.ThreadCounter
	hidden   map[uuid.UUID]bool // threads the Decider denies thread.read on
	mentions []snapMention

	readStates map[uuid.UUID]map[uuid.UUID]syncmod.ReadState
	drafts     map[uuid.UUID][]syncmod.Draft
	settings   map[uuid.UUID][]syncmod.Setting
	sidebars   map[uuid.UUID]syncmod.Sidebar
	agentList  []agents.Agent
	flags      []instance.EvaluatedFlag
	runs       []syncmod.RunSummary

	// gateErr answers sync.snapshot.read.
	gateErr error
	// fail makes the named call fail; panicOn makes it panic.
	fail    map[string]error
	panicOn string
	// block, when set, holds EventSeq until it is closed (or the build's context ends);
	// entered receives one value from every EventSeq call.
	block   chan struct{}
	entered chan struct{}

	calls       []string
	pins        map[string]int64 // per source: the version of the Scope pinned for its caller, -1 for none
	decisions   []snapDecision
	counterArgs [][]uuid.UUID
	readSeqArgs []map[uuid.UUID]int64
}

func newEmptySnapWorld() *snapWorld {
	return &snapWorld{
		epoch:      snapEpoch,
		pv:         1,
		info:       instance.Info{ID: snapInstanceID, Name: "bothy", SyncEpoch: snapEpoch, CreatedAt: snapCreated, Version: 1},
		refs:       map[uuid.UUID]identity.PrincipalRef{},
		grants:     map[uuid.UUID]snapGrants{},
		hidden:     map[uuid.UUID]bool{},
		readStates: map[uuid.UUID]map[uuid.UUID]syncmod.ReadState{},
		drafts:     map[uuid.UUID][]syncmod.Draft{},
		settings:   map[uuid.UUID][]syncmod.Setting{},
		sidebars:   map[uuid.UUID]syncmod.Sidebar{},
		fail:       map[string]error{},
	}
}

// newSnapWorld is the fixed world of the unit tests; its comments say what Alex sees.
func newSnapWorld() *snapWorld {
	w := newEmptySnapWorld()
	w.head = 1300
	w.pv = 12
	for _, p := range []identity.PrincipalRef{
		{ID: snapAlex, Kind: actor.KindPerson, DisplayName: "Alex", Handle: "alex"},
		{ID: snapSam, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"},
		{ID: snapRobin, Kind: actor.KindPerson, DisplayName: "Robin", Handle: "robin"},
		{ID: snapHelper, Kind: actor.KindAgent, DisplayName: "Helper", Handle: "helper"},
		{ID: snapBot, Kind: actor.KindApp, DisplayName: "Bot", Handle: "bot"},
	} {
		w.refs[p.ID] = p
	}
	w.spaces = []chat.Space{
		{ID: snapSupport, Name: "Support", Version: 3, CreatedAt: snapCreated},
		{ID: snapMarketing, Name: "Marketing", Version: 1, CreatedAt: snapCreated},
		{ID: snapOldSpace, Name: "Old", Version: 2, CreatedAt: snapCreated, ArchivedAt: snapCreated.Add(time.Hour)},
	}
	std := func(id, sp uuid.UUID, name string, archived bool) chat.Channel {
		c := chat.Channel{ID: id, SpaceID: sp, Kind: chat.ChannelStandard, Name: name, Topic: "about " + name, Version: 1, CreatedAt: snapCreated}
		if archived {
			c.ArchivedAt = snapCreated.Add(time.Hour)
		}
		return c
	}
	dm := func(id uuid.UUID, who ...uuid.UUID) chat.Channel {
		return chat.Channel{ID: id, Kind: chat.ChannelDM, ParticipantIDs: who, Version: 1, CreatedAt: snapCreated}
	}
	w.channels = []chat.Channel{
		std(snapTickets, snapSupport, "tickets", false),
		std(snapBilling, snapSupport, "billing", false),
		std(snapOldTickets, snapSupport, "old-tickets", true),
		std(snapLaunch, snapMarketing, "launch", false),
		std(snapSecret, snapMarketing, "secret", false),
		std(snapInOld, snapOldSpace, "in-old", false),
		dm(snapDMAlexSam, snapAlex, snapSam),
		dm(snapDMSamRobin, snapSam, snapRobin),
	}
	w.grants[snapAlex] = snapGrants{
		spaces:   map[uuid.UUID]authz.Role{snapSupport: authz.RoleMember, snapOldSpace: authz.RoleMember},
		channels: map[uuid.UUID]authz.Role{snapLaunch: authz.RoleViewer},
	}
	w.grants[snapSam] = snapGrants{spaces: map[uuid.UUID]authz.Role{snapSupport: authz.RoleMember, snapMarketing: authz.RoleMember}}
	w.grants[snapHelper] = snapGrants{channels: map[uuid.UUID]authz.Role{snapTickets: authz.RoleMember}}
	w.grants[snapBot] = snapGrants{instance: authz.RoleViewer}
	th := func(id, ch, sp uuid.UUID, last, floor int64) chat.ThreadCounter {
		return chat.ThreadCounter{ThreadID: id, ChannelID: ch, SpaceID: sp, LastMessageSeq: last, UnreadFloorSeq: floor, Version: last + 1}
	}
	w.threads = []chat.ThreadCounter{
		th(snapT1, snapTickets, snapSupport, 7, 0),
		th(snapT2, snapTickets, snapSupport, 3, 3),
		th(snapT3, snapTickets, snapSupport, 5, 0),
		th(snapT4, snapTickets, snapSupport, 9, 6),
		th(snapB1, snapBilling, snapSupport, 4, 1),
		th(snapH1, snapBilling, snapSupport, 2, 0),
		th(snapL1, snapLaunch, snapMarketing, 2, 0),
		th(snapS1, snapSecret, snapMarketing, 9, 0),
		th(snapD1, snapDMAlexSam, uuid.Nil, 2, 0),
		th(snapR1, snapDMSamRobin, uuid.Nil, 6, 0),
		th(snapOld1, snapOldTickets, snapSupport, 8, 0),
	}
	w.hidden[snapH1] = true
	w.mentions = []snapMention{
		{snapAlex, snapT1, snapTickets, 3}, // read already
		{snapAlex, snapT1, snapTickets, 6}, // unread
		{snapAlex, snapT3, snapTickets, 6}, // posted after the counters were read: a mention without unread messages
		{snapAlex, snapS1, snapSecret, 8},  // a channel Alex cannot read
		{snapAlex, snapR1, snapDMSamRobin, 5},
		{snapSam, snapT1, snapTickets, 7},
	}
	rs := func(p, thread, ch uuid.UUID, last, version int64) syncmod.ReadState {
		return syncmod.ReadState{PrincipalID: p, ThreadID: thread, ChannelID: ch, LastReadSeq: last, Version: version}
	}
	w.readStates[snapAlex] = map[uuid.UUID]syncmod.ReadState{
		snapT1:   rs(snapAlex, snapT1, snapTickets, 4, 2),
		snapT3:   rs(snapAlex, snapT3, snapTickets, 5, 1),
		snapT4:   rs(snapAlex, snapT4, snapTickets, 2, 1),
		snapL1:   rs(snapAlex, snapL1, snapLaunch, 2, 1),
		snapS1:   rs(snapAlex, snapS1, snapSecret, 1, 1),
		snapOld1: rs(snapAlex, snapOld1, snapOldTickets, 3, 1),
	}
	draft := func(p, ch, thread uuid.UUID, version int64) syncmod.Draft {
		return syncmod.Draft{PrincipalID: p, ChannelID: ch, ThreadID: thread, ContentMD: snapDraftText, Version: version, UpdatedAt: snapCreated}
	}
	w.drafts[snapAlex] = []syncmod.Draft{
		draft(snapAlex, snapTickets, uuid.Nil, 2),
		draft(snapAlex, snapTickets, snapT1, 1),
		draft(snapAlex, snapOldTickets, uuid.Nil, 4),
		draft(snapAlex, snapSecret, uuid.Nil, 1),
		draft(snapAlex, snapDMAlexSam, snapD1, 3),
		draft(snapAlex, snapNowhere, uuid.Nil, 1),
	}
	w.settings[snapAlex] = []syncmod.Setting{
		{PrincipalID: snapAlex, Key: "notify.level", Value: json.RawMessage(`{"all":false}`), Version: 3},
		{PrincipalID: snapAlex, Key: "theme", Value: json.RawMessage(`"dark"`), Version: 1},
	}
	w.sidebars[snapAlex] = syncmod.Sidebar{PrincipalID: snapAlex, Version: 5, Sections: []syncmod.SidebarSection{
		{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{snapSecret, snapTickets, snapNowhere, snapLaunch}},
		{Key: "people", Title: "People", Collapsed: true, ChannelIDs: []uuid.UUID{snapDMSamRobin, snapDMAlexSam}},
		{Key: "gone", Title: "Gone", ChannelIDs: []uuid.UUID{snapOldTickets, snapInOld}},
		{Key: "empty", Title: "", ChannelIDs: []uuid.UUID{}},
	}}
	w.agentList = []agents.Agent{
		{ID: snapHelper, DisplayName: "Helper", Handle: "helper", Description: "answers tickets", CreatedBy: snapSam, CreatedAt: snapCreated},
	}
	w.flags = []instance.EvaluatedFlag{{Key: "threads.summaries", Enabled: false}, {Key: "threads.v2", Enabled: true}}
	w.runs = []syncmod.RunSummary{}
	return w
}

// call records name and answers the failure the test set for it (panicking when told to).
func (w *snapWorld) call(name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, name)
	if w.panicOn == name {
		panic("snapshot test: " + name + " panics")
	}
	return w.fail[name]
}

// pinned records, for the source name, the permission version of the Scope pinned in ctx for
// its actor (authz.WithScope), or -1 when none is.
func (w *snapWorld) pinned(ctx context.Context, name string) {
	v := int64(-1)
	if who, ok := actor.From(ctx); ok {
		if s, ok := authz.PinnedScope(ctx, who.PrincipalID); ok {
			v = s.PermissionVersion()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pins == nil {
		w.pins = map[string]int64{}
	}
	w.pins[name] = v
}

// callLog returns the names of the calls so far, in order.
func (w *snapWorld) callLog() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

// count returns how often name was called.
func (w *snapWorld) count(name string) int {
	n := 0
	for _, c := range w.callLog() {
		if c == name {
			n++
		}
	}
	return n
}

func (w *snapWorld) channel(id uuid.UUID) (chat.Channel, bool) {
	for _, c := range w.channels {
		if c.ID == id {
			return c, true
		}
	}
	return chat.Channel{}, false
}

func (w *snapWorld) spaceArchived(id uuid.UUID) bool {
	for _, s := range w.spaces {
		if s.ID == id {
			return !s.ArchivedAt.IsZero()
		}
	}
	return false
}

// permitted is the oracle of the tests: whether p's grants (or its taking part in a direct
// message) let it read the channel, archived or not.
func (w *snapWorld) permitted(p uuid.UUID, c chat.Channel) bool {
	if c.Kind == chat.ChannelDM {
		return slices.Contains(c.ParticipantIDs, p)
	}
	g := w.grants[p]
	return g.instance != "" || g.spaces[c.SpaceID] != "" || g.channels[c.ID] != ""
}

// listed is what ListVisible lists for p: the permitted channels that are not archived and
// lie in no archived space.
func (w *snapWorld) listed(p uuid.UUID, c chat.Channel) bool {
	return w.permitted(p, c) && c.ArchivedAt.IsZero() && !w.spaceArchived(c.SpaceID)
}

func snapWho(ctx context.Context) (actor.Actor, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	return a, nil
}

// EventSeq implements app.SnapshotVersions; it waits for block when the test set one.
func (w *snapWorld) EventSeq(ctx context.Context) (int64, error) {
	if err := w.call("EventSeq"); err != nil {
		return 0, err
	}
	w.mu.Lock()
	block, entered := w.block, w.entered
	w.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.head, nil
}

// SyncEpoch implements app.SnapshotVersions.
func (w *snapWorld) SyncEpoch(context.Context) (uuid.UUID, error) {
	if err := w.call("SyncEpoch"); err != nil {
		return uuid.Nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch, nil
}

// snapState is the world as app.SnapshotState: the head, the epoch and the permission
// version in one call (wire's batch). bump, when set, advances the permission version first,
// as a grant change committed just before the head would; later, when set,
// is the permission version right after the read, as a grant change committed after the head
// would make it.
type snapState struct {
	w     *snapWorld
	bump  bool
	later int64
}

// SnapshotState implements app.SnapshotState.
func (s snapState) SnapshotState(context.Context) (app.SnapshotHead, error) {
	if err := s.w.call("SnapshotState"); err != nil {
		return app.SnapshotHead{}, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if s.bump {
		s.w.pv++
	}
	read := s.w.pv
	if s.later != 0 {
		s.w.pv = s.later
	}
	return app.SnapshotHead{Seq: s.w.head, Epoch: s.w.epoch, PermissionVersion: read}, nil
}

// ForActor implements app.DeciderSource with a Decider over the world's grants.
func (w *snapWorld) ForActor(ctx context.Context) (authz.Decider, error) {
	if err := w.call("ForActor"); err != nil {
		return nil, err
	}
	who, err := snapWho(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.grants[who.PrincipalID]
	var grants []authz.Grant
	if g.instance != "" {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceInstance, ResourceID: snapInstanceID, Role: g.instance})
	}
	for id, r := range g.spaces {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceSpace, ResourceID: id, Role: r})
	}
	spacesOf := map[uuid.UUID]uuid.UUID{}
	for id, r := range g.channels {
		grants = append(grants, authz.Grant{PrincipalID: who.PrincipalID, ResourceKind: kernel.ResourceChannel, ResourceID: id, Role: r})
		if c, ok := w.channel(id); ok && c.SpaceID != uuid.Nil {
			spacesOf[id] = c.SpaceID
		}
	}
	version := w.pv
	if v, ok := authz.KnownPermissionVersion(ctx); ok {
		// As the Authorizer does: a version the caller read stands for reading it.
		version = v
	}
	return snapDecider{w: w, scope: authz.NewScope(who.PrincipalID, version, grants, spacesOf)}, nil
}

// snapDecider decides from the world: the gate answers gateErr, thread.read is allowed on a
// permitted channel's thread that is not hidden, anything else is forbidden.
type snapDecider struct {
	w     *snapWorld
	scope authz.Scope
}

func (d snapDecider) Scope() authz.Scope { return d.scope }

func (d snapDecider) Level(authorize.Resource) authz.Role { return "" }

func (d snapDecider) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	w := d.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.decisions = append(w.decisions, snapDecision{action: action, res: res, filter: authorize.IsFilter(ctx)})
	switch action {
	case kernel.ActionSyncSnapshotRead:
		return w.gateErr
	case kernel.ActionThreadRead:
		c, ok := w.channel(res.ChannelID)
		if !ok || w.hidden[res.ID] || !w.permitted(d.scope.PrincipalID(), c) {
			return problem.ErrNotFound
		}
		return nil
	}
	return problem.ErrForbidden
}

// Ref implements app.PrincipalSource.
func (w *snapWorld) Ref(_ context.Context, id uuid.UUID) (identity.PrincipalRef, error) {
	if err := w.call("Ref"); err != nil {
		return identity.PrincipalRef{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ref, ok := w.refs[id]
	if !ok {
		return identity.PrincipalRef{}, identity.ErrPrincipalNotFound
	}
	return ref, nil
}

// Info implements app.InstanceSource.
func (w *snapWorld) Info(context.Context) (instance.Info, error) {
	if err := w.call("Info"); err != nil {
		return instance.Info{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.info, nil
}

// snapSpaces is the world as app.SpacesSource.
type snapSpaces struct{ w *snapWorld }

// List lists the spaces that are not archived and that the actor holds a grant on, or on one
// of whose channels it holds a grant (all of them for an instance grant).
func (s snapSpaces) List(ctx context.Context) ([]chat.SpaceView, error) {
	w := s.w
	if err := w.call("Spaces.List"); err != nil {
		return nil, err
	}
	w.pinned(ctx, "Spaces.List")
	if !authorize.IsFilter(ctx) {
		return nil, errors.New("snapshot test: Spaces.List outside filter mode")
	}
	who, err := snapWho(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.grants[who.PrincipalID]
	out := []chat.SpaceView{}
	for _, sp := range w.spaces {
		seen := g.instance != "" || g.spaces[sp.ID] != ""
		for id := range g.channels {
			if c, ok := w.channel(id); ok && c.SpaceID == sp.ID {
				seen = true
			}
		}
		if seen && sp.ArchivedAt.IsZero() {
			out = append(out, chat.SpaceView{Space: sp, Level: g.spaces[sp.ID], Capabilities: []kernel.Action{}})
		}
	}
	slices.SortFunc(out, func(a, b chat.SpaceView) int { return cmpNameID(a.Space.Name, b.Space.Name, a.Space.ID, b.Space.ID) })
	return out, nil
}

func cmpNameID(an, bn string, a, b uuid.UUID) int {
	if an != bn {
		if an < bn {
			return -1
		}
		return 1
	}
	return bytes.Compare(a[:], b[:])
}

// ListVisible implements app.ChannelsSource like chat does: the listed channels.
func (w *snapWorld) ListVisible(ctx context.Context) ([]chat.ChannelView, error) {
	if err := w.call("ListVisible"); err != nil {
		return nil, err
	}
	w.pinned(ctx, "ListVisible")
	who, err := snapWho(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := []chat.ChannelView{}
	for _, c := range w.channels {
		if w.listed(who.PrincipalID, c) {
			out = append(out, chat.ChannelView{Channel: c, Level: authz.RoleMember, Capabilities: []kernel.Action{kernel.ActionDraftWrite}})
		}
	}
	slices.SortFunc(out, func(a, b chat.ChannelView) int {
		return cmpNameID(a.Channel.Name, b.Channel.Name, a.Channel.ID, b.Channel.ID)
	})
	return out, nil
}

// Counters implements app.ThreadCounters like chat does: the threads of the channels above
// their floor, by channel then thread.
func (w *snapWorld) Counters(_ context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error) {
	if err := w.call("Counters"); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counterArgs = append(w.counterArgs, slices.Clone(channelIDs))
	out := []chat.ThreadCounter{}
	for _, t := range w.threads {
		if slices.Contains(channelIDs, t.ChannelID) && t.LastMessageSeq > t.UnreadFloorSeq {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b chat.ThreadCounter) int {
		if c := bytes.Compare(a.ChannelID[:], b.ChannelID[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.ThreadID[:], b.ThreadID[:])
	})
	return out, nil
}

// CountUnread implements app.MentionCounts like chat does.
func (w *snapWorld) CountUnread(_ context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	if err := w.call("CountUnread"); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readSeqArgs = append(w.readSeqArgs, maps.Clone(readSeqs))
	floors := map[uuid.UUID]int64{}
	for _, t := range w.threads {
		floors[t.ThreadID] = t.UnreadFloorSeq
	}
	out := map[uuid.UUID]int{}
	for _, m := range w.mentions {
		if m.principal == principalID && slices.Contains(channelIDs, m.channel) && m.seq > floors[m.thread] && m.seq > readSeqs[m.thread] {
			out[m.thread]++
		}
	}
	return out, nil
}

// PersonalData implements app.PersonalSource: the read states by thread id, the drafts, the
// settings and the sidebar (empty with version 0 when never stored), in one call as the
// PostgreSQL store reads them in one batch.
func (w *snapWorld) PersonalData(_ context.Context, principalID uuid.UUID) (app.PersonalData, error) {
	if err := w.call("PersonalData"); err != nil {
		return app.PersonalData{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := app.PersonalData{
		ReadStates: slices.Collect(maps.Values(w.readStates[principalID])),
		Drafts:     append([]syncmod.Draft{}, w.drafts[principalID]...),
		Settings:   append([]syncmod.Setting{}, w.settings[principalID]...),
		Sidebar:    syncmod.Sidebar{PrincipalID: principalID, Sections: []syncmod.SidebarSection{}},
	}
	slices.SortFunc(d.ReadStates, func(a, b syncmod.ReadState) int { return bytes.Compare(a.ThreadID[:], b.ThreadID[:]) })
	if d.ReadStates == nil {
		d.ReadStates = []syncmod.ReadState{}
	}
	if sb, ok := w.sidebars[principalID]; ok {
		// A deep copy: the snapshot filters the channel ids of what it is given.
		secs := make([]syncmod.SidebarSection, 0, len(sb.Sections))
		for _, s := range sb.Sections {
			s.ChannelIDs = slices.Clone(s.ChannelIDs)
			secs = append(secs, s)
		}
		sb.Sections = secs
		d.Sidebar = sb
	}
	return d, nil
}

// snapAgents is the world as app.AgentsSource.
type snapAgents struct{ w *snapWorld }

func (s snapAgents) List(ctx context.Context) ([]agents.Agent, error) {
	if err := s.w.call("Agents.List"); err != nil {
		return nil, err
	}
	s.w.pinned(ctx, "Agents.List")
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return append([]agents.Agent{}, s.w.agentList...), nil
}

// Evaluate implements app.FlagsSource.
func (w *snapWorld) Evaluate(context.Context, actor.Actor) ([]instance.EvaluatedFlag, error) {
	if err := w.call("Evaluate"); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]instance.EvaluatedFlag{}, w.flags...), nil
}

// ActiveRuns implements app.RunSummarySource.
func (w *snapWorld) ActiveRuns(context.Context) ([]syncmod.RunSummary, error) {
	if err := w.call("ActiveRuns"); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]syncmod.RunSummary{}, w.runs...), nil
}

// testSnapshotParallelism is sync.snapshot_parallelism in these tests: below the key's default,
// so that the bound a test sees is the configured one.
const testSnapshotParallelism = 3

// snapDeps binds every port of the snapshot to w.
func snapDeps(w *snapWorld) app.SnapshotDeps {
	return app.SnapshotDeps{
		Versions: w, Authorizer: w, Principals: w, Instance: w,
		Spaces: snapSpaces{w}, Channels: w, Threads: w, Mentions: w,
		Personal: w, Agents: snapAgents{w}, Flags: w, Runs: w,
		Encoder: app.SnapshotEncoderFunc(snapJSON), Parallel: testSnapshotParallelism,
	}
}

// snapJSON stands for the HTTP adapter's encoder: the JSON of every member of the view but
// Body and ETag.
func snapJSON(v syncmod.SnapshotView) ([]byte, error) {
	v.Body, v.ETag = nil, ""
	return json.Marshal(v)
}

func newSnapshot(t *testing.T, w *snapWorld) *app.Snapshot {
	t.Helper()
	s, err := app.NewSnapshot(snapDeps(w))
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	return s
}

// snapAs returns a context whose actor is principalID of kind.
func snapAs(ctx context.Context, principalID uuid.UUID, kind actor.Kind) context.Context {
	return actor.With(ctx, actor.Actor{PrincipalID: principalID, Kind: kind})
}
