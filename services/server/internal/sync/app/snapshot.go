package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/conditional"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// SnapshotDeps are what Snapshot needs, all required. Each field names what wire binds it to.
type SnapshotDeps struct {
	// Versions reads the head and the epoch: instance.Versions.
	Versions SnapshotVersions
	// State, when set, reads the head, the epoch and the permission version in one round
	// trip (wire's pipelined batch) before the gate; Versions is then not read, and the gate's
	// Scope, taken at that permission version, filters the build.
	State SnapshotState
	// Authorizer gates each call (sync.snapshot.read), gives the Scope and decides thread.read
	// on the unread threads: authz.Authorizer.
	Authorizer DeciderSource
	// Principals names the actor: identity.Directory.
	Principals PrincipalSource
	// Instance reads the instance row: the instance module's PostgreSQL store (Info).
	Instance InstanceSource
	// Spaces lists the actor's spaces: chat.Spaces.
	Spaces SpacesSource
	// Channels lists the actor's channels: chat.Channels.
	Channels ChannelsSource
	// Threads reads the thread counters: chat.Threads.
	Threads ThreadCounters
	// Mentions counts the unread mentions: chat.Mentions.
	Mentions MentionCounts
	// Personal reads the personal data: this module's *Personal.
	Personal PersonalSource
	// Agents lists the agents: agents.Agents.
	Agents AgentsSource
	// Presences reads the agents' presence: agents.Presences; nil reports every agent
	// unknown.
	Presences AgentPresenceSource
	// Flags evaluates the feature flags: instance.Flags.
	Flags FlagsSource
	// Runs lists the runs in progress (the agents module's runs).
	Runs RunSummarySource
	// Encoder writes the view as getSnapshot's body, once per build: the HTTP adapter's
	// EncodeSnapshot.
	Encoder SnapshotEncoder
	// Parallel is how many of a build's parts are read at once, each on a pool connection
	// of its own: sync.snapshot_parallelism (at least minSnapshotParallel). Its default keeps the longest chain
	// (the channels, then the thread counters; the personal data, then the mention counts) on
	// two connections while the small parts share the others, so a build takes about as long
	// as that chain (make bench's snapshot), and a reconnect storm of many actors still leaves
	// most of the pool (database.max_conns) to the rest of the API.
	Parallel int
}

// Snapshot implements sync.Snapshot: it assembles the snapshot from the ports of chat,
// identity, instance, authz, agents and this module's personal data, computes the unread
// counts in Go (never a query across schemas), filters every part by the channels the actor
// may read, encodes it once with its ETag, and lets concurrent calls of one actor share one
// build, the encoded body included.
type Snapshot struct {
	deps    SnapshotDeps
	flights *coalescer[syncmod.SnapshotView]
}

var _ syncmod.Snapshot = (*Snapshot)(nil)

// NewSnapshot returns the snapshot use case over deps; it fails for a missing dependency, so
// a wiring mistake stops the process at start.
func NewSnapshot(deps SnapshotDeps) (*Snapshot, error) {
	var errs []error
	for _, d := range []struct {
		name    string
		missing bool
	}{
		{"versions", deps.Versions == nil}, {"authorizer", deps.Authorizer == nil},
		{"principals", deps.Principals == nil}, {"instance", deps.Instance == nil},
		{"spaces", deps.Spaces == nil}, {"channels", deps.Channels == nil},
		{"threads", deps.Threads == nil}, {"mentions", deps.Mentions == nil},
		{"personal", deps.Personal == nil}, {"agents", deps.Agents == nil},
		{"flags", deps.Flags == nil}, {"runs", deps.Runs == nil},
		{"encoder", deps.Encoder == nil},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	if deps.Parallel < minSnapshotParallel {
		errs = append(errs, fmt.Errorf("%s is %d, want at least %d", KeySnapshotParallelism.Name, deps.Parallel, minSnapshotParallel))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new snapshot: %w", err)
	}
	return &Snapshot{deps: deps, flights: newCoalescer[syncmod.SnapshotView]()}, nil
}

// Build implements sync.Snapshot. Each call is authorized on its own (audited on denial);
// then it joins the build of its actor and permission version that is in progress, or
// starts one. The permission version in the key means that a call never gets a snapshot
// filtered with grants older than those current when it was authorized.
func (s *Snapshot) Build(ctx context.Context) (syncmod.SnapshotView, error) {
	v, err := s.build(ctx)
	if err != nil {
		return syncmod.SnapshotView{}, fmt.Errorf("sync: build snapshot: %w", err)
	}
	return v, nil
}

func (s *Snapshot) build(ctx context.Context) (syncmod.SnapshotView, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return syncmod.SnapshotView{}, problem.ErrUnauthenticated
	}
	// With a State, the head, the epoch and the permission version come first, in one round
	// trip, and the gate's Scope is the one at that version: it then filters the whole build.
	var head *SnapshotHead
	gateCtx := ctx
	if s.deps.State != nil {
		st, err := s.deps.State.SnapshotState(ctx)
		if err != nil {
			return syncmod.SnapshotView{}, fmt.Errorf("head, sync epoch and permission version: %w", err)
		}
		head = &st
		gateCtx = authz.WithPermissionVersion(ctx, st.PermissionVersion)
	}
	gate, err := s.deps.Authorizer.ForActor(gateCtx)
	if err != nil {
		return syncmod.SnapshotView{}, err
	}
	if err := gate.Authorize(ctx, kernel.ActionSyncSnapshotRead, authorize.Instance()); err != nil {
		return syncmod.SnapshotView{}, err
	}
	key := snapshotKey(who, gate.Scope().PermissionVersion())
	return s.flights.do(ctx, key, func(ctx context.Context) (syncmod.SnapshotView, error) {
		return s.assemble(ctx, who, head, gate)
	})
}

// snapshotKey is what makes two calls' snapshots the same: the principal, its kind, the
// token's scopes and device state (they change what authorize allows) and the permission
// version. The device itself changes nothing.
func snapshotKey(who actor.Actor, permissionVersion int64) string {
	scopes := slices.Clone(who.Scopes)
	slices.Sort(scopes)
	return strings.Join([]string{
		who.PrincipalID.String(), string(who.Kind), strconv.FormatBool(who.DevicePending),
		strings.Join(scopes, " "), strconv.FormatInt(permissionVersion, 10),
	}, "|")
}

// assemble reads every part for who. The head and the epoch come first (spec 03): with READ
// COMMITTED every change with seq <= HeadSeq is visible to each later read, so it is in the
// snapshot; a later change may be in it too, and arrives again by catch-up after HeadSeq,
// which clients apply idempotently by version. The Scope is read after the head for the same
// reason: a grant change up to HeadSeq is in PermissionVersion, a later one arrives as
// permissions.changed. Every other part is read after those three, concurrently (readParts).
// The view is encoded last, and its ETag is the hash of that encoding.
//
// With a State, build read the three in one round trip before its gate (head), and the
// gate's Decider, whose Scope is at the permission version read there, serves the build.
func (s *Snapshot) assemble(ctx context.Context, who actor.Actor, head *SnapshotHead, gate authz.Decider) (syncmod.SnapshotView, error) {
	var v syncmod.SnapshotView
	dec := gate
	if head != nil {
		v.HeadSeq, v.SyncEpoch = head.Seq, head.Epoch
	} else {
		var err error
		if dec, err = s.head(ctx, &v); err != nil {
			return v, err
		}
	}
	scope := dec.Scope()
	v.PermissionVersion, v.IsOwner = scope.PermissionVersion(), scope.IsOwner()
	// Every part is filtered with this one Scope: the sources' own authorization finds it in
	// the context instead of reading the permission version again.
	ctx = authz.WithScope(ctx, scope)
	if err := s.readParts(ctx, dec, who, &v); err != nil {
		return v, err
	}
	body, err := s.deps.Encoder.EncodeSnapshot(v)
	if err != nil {
		return v, fmt.Errorf("encode: %w", err)
	}
	// Capped, so that appending to the shared body can never write into its spare capacity.
	v.Body = body[:len(body):len(body)]
	v.ETag = conditional.Tag(v.Body)
	return v, nil
}

// head reads the head and the epoch into v, one after the other, and then the Decider, whose
// Scope is thus read after the head (without a State).
func (s *Snapshot) head(ctx context.Context, v *syncmod.SnapshotView) (authz.Decider, error) {
	var err error
	if v.HeadSeq, err = s.deps.Versions.EventSeq(ctx); err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	if v.SyncEpoch, err = s.deps.Versions.SyncEpoch(ctx); err != nil {
		return nil, fmt.Errorf("sync epoch: %w", err)
	}
	dec, err := s.deps.Authorizer.ForActor(ctx)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	return dec, nil
}

// snapshotParts is what readParts's parts read, each field written by one part only and read
// after every part returned (or, for channels and ids, after listed is closed).
type snapshotParts struct {
	listed     chan struct{} // closed once channels, ids and visible are set
	positioned chan struct{} // closed once readSeqs is set
	channels   []chat.ChannelView
	ids        []uuid.UUID
	visible    map[uuid.UUID]bool
	readSeqs   map[uuid.UUID]int64
	counters   []chat.ThreadCounter
	unread     []counterUnread // per counter, decided once counters and readSeqs are known
	allowed    int             // how many of unread have unread messages and may be read
	mentions   map[uuid.UUID]int
	sidebar    syncmod.Sidebar
	settings   []syncmod.Setting
	drafts     []syncmod.Draft
	agents     []agents.Agent
	presences  map[uuid.UUID]agents.Presence // by agent id; an agent absent is unknown
}

// readParts reads every part after the Scope into v, concurrently through a partGroup: each
// part is one or two statements on a connection of its own, so the build waits about as long
// as its longest chain instead of the sum of all (spec 03 fixes only that the head, the epoch
// and the Scope are read before them). The chains are the channels, then the thread counters
// of the visible channels; and the person's own data (read states, sidebar, settings and
// drafts in one read), then, once the channels are known too, the mention counts above the
// read positions. The personal parts of a person are restricted to
// the visible channels once everything is read: the personal tables hold ids without foreign
// keys and keep ids of channels the person can no longer read (spec 02). The unread counts and
// the thread.read decisions on threads with unread messages are made as soon as the counters
// and the read positions are known, while the mention counts are still being read; only the
// threads listed for a mention alone are decided once those are in. The first part that fails
// ends the build with its error and cancels the others.
func (s *Snapshot) readParts(ctx context.Context, dec authz.Decider, who actor.Actor, v *syncmod.SnapshotView) error {
	person := who.Kind == actor.KindPerson
	p := snapshotParts{listed: make(chan struct{}), positioned: make(chan struct{})}
	g := newPartGroup(ctx, s.deps.Parallel)
	g.spawn(func(ctx context.Context) error {
		channels, err := s.deps.Channels.ListVisible(ctx)
		if err != nil {
			return fmt.Errorf("channels: %w", err)
		}
		p.channels = nonNil(channels)
		p.ids = make([]uuid.UUID, 0, len(p.channels))
		p.visible = make(map[uuid.UUID]bool, len(p.channels))
		for _, c := range p.channels {
			p.ids = append(p.ids, c.Channel.ID)
			p.visible[c.Channel.ID] = true
		}
		close(p.listed)
		if !person {
			// Agents and apps keep no personal data (spec 03); nothing is read for them.
			return nil
		}
		if p.counters, err = s.deps.Threads.Counters(ctx, p.ids); err != nil {
			return fmt.Errorf("thread counters: %w", err)
		}
		select {
		case <-p.positioned:
		case <-ctx.Done():
			return fmt.Errorf("thread counters: %w", ctx.Err())
		}
		if p.unread, p.allowed, err = decideUnread(ctx, dec, p.counters, p.readSeqs, p.visible); err != nil {
			return fmt.Errorf("unread threads: %w", err)
		}
		return nil
	})
	if person {
		s.spawnPersonal(g, who.PrincipalID, &p)
	}
	g.spawn(func(ctx context.Context) (err error) {
		if v.Principal, err = s.deps.Principals.Ref(ctx, who.PrincipalID); err != nil {
			return fmt.Errorf("principal: %w", err)
		}
		return nil
	})
	g.spawn(func(ctx context.Context) (err error) {
		if v.Instance, err = s.deps.Instance.Info(ctx); err != nil {
			return fmt.Errorf("instance: %w", err)
		}
		return nil
	})
	g.spawn(func(ctx context.Context) error {
		// In filter mode, and a denial is no space: chat's listing first authorizes space.read
		// on the instance, which an app without the messages:read scope is denied, yet such an
		// app may read snapshots (events:subscribe) and simply sees no space.
		spaces, err := s.deps.Spaces.List(authorize.Filter(ctx))
		switch {
		case snapshotDenied(err):
			spaces = nil
		case err != nil:
			return fmt.Errorf("spaces: %w", err)
		}
		v.Spaces = nonNil(spaces)
		return nil
	})
	g.spawn(func(ctx context.Context) (err error) {
		if p.agents, err = s.deps.Agents.List(ctx); err != nil {
			return fmt.Errorf("agents: %w", err)
		}
		if s.deps.Presences == nil || len(p.agents) == 0 {
			return nil
		}
		ids := make([]uuid.UUID, len(p.agents))
		for i, a := range p.agents {
			ids[i] = a.ID
		}
		if p.presences, err = s.deps.Presences.Presences(ctx, ids); err != nil {
			return fmt.Errorf("agent presence: %w", err)
		}
		return nil
	})
	g.spawn(func(ctx context.Context) error {
		features, err := s.deps.Flags.Evaluate(ctx, who)
		if err != nil {
			return fmt.Errorf("features: %w", err)
		}
		v.Features = nonNil(features)
		return nil
	})
	g.spawn(func(ctx context.Context) error {
		runs, err := s.deps.Runs.ActiveRuns(ctx)
		if err != nil {
			return fmt.Errorf("active runs: %w", err)
		}
		v.ActiveRuns = nonNil(runs)
		return nil
	})
	if err := g.wait(); err != nil {
		return err
	}
	v.Channels = p.channels
	v.Agents = agentPresences(p.agents, p.presences)
	if !person {
		v.Sidebar = syncmod.Sidebar{PrincipalID: who.PrincipalID, Sections: []syncmod.SidebarSection{}}
		v.UnreadThreads, v.Settings, v.Drafts = []syncmod.UnreadThread{}, []syncmod.Setting{}, []syncmod.DraftRef{}
		return nil
	}
	v.Sidebar = visibleSidebar(who.PrincipalID, p.sidebar, p.visible)
	var err error
	if v.UnreadThreads, err = unreadThreads(ctx, dec, p.counters, p.unread, p.allowed, p.mentions); err != nil {
		return fmt.Errorf("unread threads: %w", err)
	}
	v.Settings = nonNil(p.settings)
	v.Drafts = make([]syncmod.DraftRef, 0, len(p.drafts))
	for _, d := range p.drafts {
		if p.visible[d.ChannelID] {
			v.Drafts = append(v.Drafts, syncmod.DraftRef{ChannelID: d.ChannelID, ThreadID: d.ThreadID, Version: d.Version})
		}
	}
	return nil
}

// spawnPersonal spawns the part of a person's own data: the read states, sidebar, settings
// and drafts in one read, then the mention counts (which wait for the channels part's listed).
func (s *Snapshot) spawnPersonal(g *partGroup, who uuid.UUID, p *snapshotParts) {
	g.spawn(func(ctx context.Context) error {
		d, err := s.deps.Personal.PersonalData(ctx, who)
		if err != nil {
			return fmt.Errorf("personal data: %w", err)
		}
		p.sidebar, p.settings, p.drafts = d.Sidebar, d.Settings, d.Drafts
		select {
		case <-p.listed:
		case <-ctx.Done():
			return fmt.Errorf("read states: %w", ctx.Err())
		}
		// Only the read positions of visible channels leave for the mention count: the read
		// state keeps its thread's channel for exactly this.
		p.readSeqs = make(map[uuid.UUID]int64, len(d.ReadStates))
		for _, rs := range d.ReadStates {
			if p.visible[rs.ChannelID] {
				p.readSeqs[rs.ThreadID] = rs.LastReadSeq
			}
		}
		close(p.positioned)
		if p.mentions, err = s.deps.Mentions.CountUnread(ctx, who, p.ids, p.readSeqs); err != nil {
			return fmt.Errorf("unread mentions: %w", err)
		}
		return nil
	})
}

// visibleSidebar is sb without the channel ids outside visible. Sections stay, also when
// that leaves them empty: they are the owner's arrangement, and a grant may return.
func visibleSidebar(who uuid.UUID, sb syncmod.Sidebar, visible map[uuid.UUID]bool) syncmod.Sidebar {
	out := syncmod.Sidebar{PrincipalID: who, Version: sb.Version, Sections: make([]syncmod.SidebarSection, 0, len(sb.Sections))}
	for _, sec := range sb.Sections {
		ids := make([]uuid.UUID, 0, len(sec.ChannelIDs))
		for _, id := range sec.ChannelIDs {
			if visible[id] {
				ids = append(ids, id)
			}
		}
		sec.ChannelIDs = ids
		out.Sections = append(out.Sections, sec)
	}
	return out
}

// The thread.read decision on a counter's thread, made once per build.
const (
	undecided = iota
	allowed
	denied
)

// counterUnread is what decideUnread found for one thread counter: whether its channel is
// visible, the read position and the unread count, and the thread.read decision when the
// thread has unread messages.
type counterUnread struct {
	visible  bool
	decision int8
	read     int64
	unread   int64
}

// decideUnread computes, per counter, the read position and the unread count, and decides
// thread.read (filter mode: a hidden thread is dropped without a denial audit) on the threads
// of visible channels with unread messages. The snapshot calls it before the mention counts
// are in, so that most decisions overlap that query; a thread without unread messages is
// decided later, and only when it has an unread mention. It also returns how many threads it
// allowed.
func decideUnread(ctx context.Context, dec authz.Decider, counters []chat.ThreadCounter, readSeqs map[uuid.UUID]int64, visible map[uuid.UUID]bool) ([]counterUnread, int, error) {
	filter := authorize.Filter(ctx)
	out := make([]counterUnread, len(counters))
	allowedCount := 0
	for i, c := range counters {
		if !visible[c.ChannelID] {
			continue
		}
		u := counterUnread{visible: true, read: readSeqs[c.ThreadID]}
		u.unread = domain.UnreadCount(c.LastMessageSeq, u.read, c.UnreadFloorSeq)
		if u.unread > 0 {
			ok, err := mayReadThread(filter, dec, c)
			if err != nil {
				return nil, 0, err
			}
			u.decision = denied
			if ok {
				u.decision = allowed
				allowedCount++
			}
		}
		out[i] = u
	}
	return out, allowedCount, nil
}

// mayReadThread decides thread.read on c's thread in filter mode: false for a thread hidden
// from the actor.
func mayReadThread(filter context.Context, dec authz.Decider, c chat.ThreadCounter) (bool, error) {
	res := authorize.Resource{Kind: kernel.ResourceThread, ID: c.ThreadID, SpaceID: c.SpaceID, ChannelID: c.ChannelID, ThreadID: c.ThreadID}
	err := dec.Authorize(filter, kernel.ActionThreadRead, res)
	switch {
	case snapshotDenied(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("authorize thread %s: %w", c.ThreadID, err)
	}
	return true, nil
}

// unreadThreads combines the thread counters, what decideUnread found for each (units[i] is
// counters[i]'s, allowedCount how many it allowed) and the mention counts: a thread is listed when it has unread messages or
// unread mentions and the actor may read it (thread.read in filter mode, decided here for a
// thread listed for its mentions alone). A counter of a channel outside the visible channels
// is dropped whatever its source says, and a mention count of a thread without counter
// (posted after the counters were read, so after HeadSeq) arrives by catch-up instead.
// Ordered by channel id, then thread id.
func unreadThreads(ctx context.Context, dec authz.Decider, counters []chat.ThreadCounter, units []counterUnread, allowedCount int, mentions map[uuid.UUID]int) ([]syncmod.UnreadThread, error) {
	filter := authorize.Filter(ctx)
	// At most the threads allowed for their unread messages and those with mentions: the list
	// is allocated once (thousands of threads would otherwise be copied as it grows).
	out := make([]syncmod.UnreadThread, 0, min(len(counters), allowedCount+len(mentions)))
	for i, c := range counters {
		u := units[i]
		if !u.visible {
			continue
		}
		mentioned := int64(mentions[c.ThreadID])
		if u.unread == 0 && mentioned == 0 {
			continue
		}
		if u.decision == undecided {
			ok, err := mayReadThread(filter, dec, c)
			if err != nil {
				return nil, err
			}
			u.decision = denied
			if ok {
				u.decision = allowed
			}
		}
		if u.decision == denied {
			continue
		}
		out = append(out, syncmod.UnreadThread{
			ThreadID: c.ThreadID, ChannelID: c.ChannelID, SpaceID: c.SpaceID,
			LastMessageSeq: c.LastMessageSeq, LastReadSeq: u.read, UnreadCount: u.unread, MentionCount: mentioned,
		})
	}
	slices.SortFunc(out, func(a, b syncmod.UnreadThread) int {
		if c := bytes.Compare(a.ChannelID[:], b.ChannelID[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.ThreadID[:], b.ThreadID[:])
	})
	return out, nil
}

// snapshotDenied reports whether err is a decision that hides a thread from the actor.
func snapshotDenied(err error) bool {
	return errors.Is(err, problem.ErrNotFound) || errors.Is(err, problem.ErrForbidden)
}

// agentPresences names each agent with its announced presence (spec 03, "Presence"): the
// state and billing mode of its last agent.presence_changed, unknown without heartbeats.
func agentPresences(list []agents.Agent, presences map[uuid.UUID]agents.Presence) []syncmod.AgentPresence {
	out := make([]syncmod.AgentPresence, 0, len(list))
	for _, a := range list {
		ap := syncmod.AgentPresence{
			Agent: identity.PrincipalRef{ID: a.ID, Kind: actor.KindAgent, DisplayName: a.DisplayName, Handle: a.Handle},
			State: syncmod.AgentStateUnknown,
		}
		if pr, ok := presences[a.ID]; ok && pr.State != "" {
			ap.State = syncmod.AgentState(pr.State)
			ap.ReportedBillingMode = pr.ReportedBillingMode
		}
		out = append(out, ap)
	}
	return out
}

// nonNil returns s, or an empty slice for nil: the API has no null (spec 05).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
