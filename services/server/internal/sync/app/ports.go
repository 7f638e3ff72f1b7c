// Package app holds the use cases of the sync module: the log tail (one per process, feeding
// the gateway's live events), the maintenance of the log (partition upkeep), the personal
// data of each principal (read states, drafts, settings, the sidebar; Personal implements
// sync.Personal), catch-up (CatchUp) and the snapshot (Snapshot). The ports it needs are
// declared here, from its point of view; the PostgreSQL adapters and the other modules
// implement them and wire binds them.
package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/actor"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// EventReader reads the log by seq. The tail relies on the counter-row pattern: a committed
// event with seq s is visible only after every event below s is, so reading "seq > after in
// order" never skips an event that commits later.
type EventReader interface {
	// EventsAfter returns at most limit events with seq > after, in ascending seq order;
	// fewer than limit means the caller reached the head as it stood when the statement
	// ran. Errors are the database's, wrapped.
	EventsAfter(ctx context.Context, after int64, limit int) ([]domain.StoredEvent, error)
}

// HeadReader tells the current head of the log: the event_seq counter, which never moves
// backwards and is not lowered by retention (instance.Versions satisfies it). The tail starts
// there, so a process delivers the events committed after it started.
type HeadReader interface {
	// EventSeq returns the seq of the newest committed event (0 before the first).
	EventSeq(ctx context.Context) (int64, error)
}

// Listener wakes the tail when the head moves, so live events arrive in one round trip
// instead of at the next poll. It is an optimisation only: the tail also polls, so a lost
// notification delays an event, it never loses one.
type Listener interface {
	// Listen connects, subscribes to the log's notifications and then blocks: it calls
	// ready once the subscription is in place, and notify for every notification with the
	// head seq it carries (-1 when the payload is not a number). Both run on the goroutine
	// that called Listen. Listen returns ctx.Err() when ctx ends and any other error when
	// the connection fails or is lost; the tail then calls it again after a backoff.
	Listen(ctx context.Context, ready func(), notify func(head int64)) error
}

// Places tells the personal-data use cases where a thread or a channel lies, so that they can
// authorize the actor on it (its ancestors carry the grants) and clamp a read state to the
// thread's newest message, without reading chat's tables (spec 01). Wire binds it to the chat
// module (Threads.Get and Channels.Get). It authorizes nothing: the use cases do.
type Places interface {
	// Thread returns where the thread lies and its newest message seq; an error wrapping
	// problem.ErrNotFound when there is no such thread.
	Thread(ctx context.Context, id uuid.UUID) (ThreadPlace, error)
	// Channel returns where the channel lies and whether it is archived; an error wrapping
	// problem.ErrNotFound when there is no such channel.
	Channel(ctx context.Context, id uuid.UUID) (ChannelPlace, error)
}

// ThreadPlace is what the personal-data use cases need to know of a thread.
type ThreadPlace struct {
	// ThreadID is the thread's id.
	ThreadID uuid.UUID
	// ChannelID is the channel the thread lies in.
	ChannelID uuid.UUID
	// SpaceID is the channel's space; uuid.Nil in a direct message.
	SpaceID uuid.UUID
	// LastMessageSeq is the per-thread seq of the newest message (0 before the first); read
	// states are clamped to it.
	LastMessageSeq int64
}

// ChannelPlace is what the personal-data use cases need to know of a channel.
type ChannelPlace struct {
	// ChannelID is the channel's id.
	ChannelID uuid.UUID
	// SpaceID is the channel's space; uuid.Nil for a direct message.
	SpaceID uuid.UUID
	// Archived is true when the channel (or its space) is archived: it takes no new drafts,
	// as it takes no new messages.
	Archived bool
}

// PersonalStore keeps the personal data (sync.read_states, sync.drafts, sync.user_settings,
// sync.sidebar). Every method runs in the transaction of ctx when there is one. Each upsert
// stores a new row with version 1 or raises the existing row's version by one, in one
// statement (concurrent writes of one row serialize on its lock, none is lost), and returns
// the row as stored; the Version of its argument is ignored. Readers return empty slices, not
// nil. Errors are the database's, wrapped.
type PersonalStore interface {
	// UpsertReadState stores the read state of (rs.PrincipalID, rs.ThreadID) with its channel
	// and last read seq, at time at.
	UpsertReadState(ctx context.Context, rs syncmod.ReadState, at time.Time) (syncmod.ReadState, error)
	// AdvanceReadState moves the read state of (rs.PrincipalID, rs.ThreadID) forward to
	// rs.LastReadSeq with its channel, like UpsertReadState, unless it is already at or past
	// it: then it changes nothing and reports moved false.
	AdvanceReadState(ctx context.Context, rs syncmod.ReadState, at time.Time) (stored syncmod.ReadState, moved bool, err error)
	// ReadStates returns every read state of the principal, ordered by thread id.
	ReadStates(ctx context.Context, principalID uuid.UUID) ([]syncmod.ReadState, error)
	// UpsertDraft stores the draft of (d.PrincipalID, d.ChannelID, d.ThreadID) with its text,
	// saved at d.UpdatedAt; uuid.Nil as thread is the channel's own draft.
	UpsertDraft(ctx context.Context, d syncmod.Draft) (syncmod.Draft, error)
	// DeleteDraft removes the draft of (principalID, channelID, threadID) and returns it as it
	// was; found is false, and nothing changes, when there is none.
	DeleteDraft(ctx context.Context, principalID, channelID, threadID uuid.UUID) (deleted syncmod.Draft, found bool, err error)
	// Drafts returns every draft of the principal, ordered by channel id, the channel's own
	// draft first, then by thread id.
	Drafts(ctx context.Context, principalID uuid.UUID) ([]syncmod.Draft, error)
	// Draft returns the draft of (principalID, channelID, threadID); found is false when there
	// is none.
	Draft(ctx context.Context, principalID, channelID, threadID uuid.UUID) (d syncmod.Draft, found bool, err error)
	// UpsertSetting stores the setting (s.PrincipalID, s.Key) with its value (valid JSON,
	// checked by the caller), at time at. The returned value is as the database keeps it.
	UpsertSetting(ctx context.Context, s syncmod.Setting, at time.Time) (syncmod.Setting, error)
	// Settings returns every setting of the principal, ordered by key.
	Settings(ctx context.Context, principalID uuid.UUID) ([]syncmod.Setting, error)
	// UpsertSidebar replaces the sidebar of sb.PrincipalID with sb.Sections, at time at.
	UpsertSidebar(ctx context.Context, sb syncmod.Sidebar, at time.Time) (syncmod.Sidebar, error)
	// Sidebar returns the principal's sidebar; found is false when none was ever stored.
	Sidebar(ctx context.Context, principalID uuid.UUID) (sb syncmod.Sidebar, found bool, err error)
	// PersonalData returns the principal's read states, sidebar (Version 0, no sections, when
	// none was ever stored), settings and drafts, in the orders of the four readers above, in
	// one round trip: the snapshot's personal part.
	PersonalData(ctx context.Context, principalID uuid.UUID) (PersonalData, error)
}

// TxRunner runs a use case's writes in one transaction that the store and the appender join
// through the context (kernel/tx.Runner).
type TxRunner interface {
	// RunInTx runs fn in a transaction and commits when fn returns nil, joining the
	// transaction of ctx when there is one.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// The outgoing ports of the snapshot (app.Snapshot). Each is the one question the snapshot
// asks its source, so a fake answers it in a few lines; wire binds each to the module named.
// None of them authorizes anything the snapshot does not rely on: the snapshot filters.

// SnapshotVersions reads the head of the log and the sync epoch, the two parts read before
// every other (instance.Versions).
type SnapshotVersions interface {
	// EventSeq returns the seq of the newest committed event (0 before the first).
	EventSeq(ctx context.Context) (int64, error)
	// SyncEpoch returns the instance's sync epoch.
	SyncEpoch(ctx context.Context) (uuid.UUID, error)
}

// SnapshotState reads what a snapshot reads before any other part: the head (the event_seq
// counter, as SnapshotVersions.EventSeq reads it), then the sync epoch, then the permission
// version, in this order, each without a lock. Wire binds it to one pipelined batch of the
// instance adapter's reads, so they cost one round trip instead of three; without it, the
// snapshot reads the head and the epoch one after the other and takes the Scope again.
type SnapshotState interface {
	// SnapshotState returns the three values; errors are the database's, wrapped.
	SnapshotState(ctx context.Context) (SnapshotHead, error)
}

// SnapshotHead is what SnapshotState reads.
type SnapshotHead struct {
	// Seq is the event_seq counter, the snapshot's head_seq.
	Seq int64
	// Epoch is the instance's sync epoch.
	Epoch uuid.UUID
	// PermissionVersion is the permission_version counter, read after Seq: a grant change
	// up to Seq is in it.
	PermissionVersion int64
}

// DeciderSource hands out a Decider for the actor in ctx with its current Scope
// (authz.Authorizer), so that many decisions cost no query each: catch-up decides its rows
// with it; the snapshot gates on it, reports its permission version and owner flag, and
// decides thread.read on every unread thread with it.
type DeciderSource interface {
	// ForActor returns the Decider; problem.ErrUnauthenticated without an actor.
	ForActor(ctx context.Context) (authz.Decider, error)
}

// PrincipalSource names the actor (identity.Directory).
type PrincipalSource interface {
	// Ref returns the principal with id; an error wrapping problem.ErrNotFound when there
	// is none.
	Ref(ctx context.Context, id uuid.UUID) (identity.PrincipalRef, error)
}

// InstanceSource reads the instance row (the instance module's PostgreSQL store).
type InstanceSource interface {
	// Info returns the instance; instance.ErrNoInstance before it was set up.
	Info(ctx context.Context) (instance.Info, error)
}

// SpacesSource lists the spaces of the actor in ctx (chat.Spaces). The snapshot calls it with
// a filter-mode context (authorize.Filter) and reads a denial as no space at all.
type SpacesSource interface {
	// List returns the spaces the actor may read that are not archived, with its level and
	// capabilities, by name then id.
	List(ctx context.Context) ([]chat.SpaceView, error)
}

// ChannelsSource lists the channels of the actor in ctx (chat.Channels). Their ids are the
// snapshot's visible channels: every other part is filtered by them.
type ChannelsSource interface {
	// ListVisible returns every channel the actor may read that is not archived (nor its
	// space), and the direct messages it takes part in, with its level and capabilities.
	ListVisible(ctx context.Context) ([]chat.ChannelView, error)
}

// ThreadCounters reads what unread counting needs of threads (chat.Threads), so that unread
// counts are computed in Go from two modules' data, never by a query across their schemas.
type ThreadCounters interface {
	// Counters returns, in one query, the threads of the channels whose newest message seq
	// is above their unread floor. It authorizes nothing.
	Counters(ctx context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error)
}

// MentionCounts counts the unread mentions of a principal (chat.Mentions).
type MentionCounts interface {
	// CountUnread counts, per thread of the channels, the mentions of the principal above
	// both the thread's unread floor and readSeqs[thread] (0 when absent), in one query;
	// threads without any are absent. It authorizes nothing.
	CountUnread(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error)
}

// PersonalData is a person's own data as the snapshot reads it, together: each list empty, not
// nil, when there is none.
type PersonalData struct {
	// ReadStates are the read states, by thread id: a list, not sync.Personal's map, since
	// the snapshot keeps only the positions of visible channels.
	ReadStates []syncmod.ReadState
	// Sidebar is the sidebar; Version 0 with no sections when never stored.
	Sidebar syncmod.Sidebar
	// Settings are the settings by key.
	Settings []syncmod.Setting
	// Drafts are the drafts by channel, the channel's own draft first.
	Drafts []syncmod.Draft
}

// PersonalSource reads a person's own data for the snapshot (this module's *Personal). It
// authorizes nothing: the snapshot reads the actor's own data and filters out the channels it
// can no longer read.
type PersonalSource interface {
	// PersonalData returns the principal's read states, sidebar, settings and drafts, read
	// together (one round trip on PostgreSQL).
	PersonalData(ctx context.Context, principalID uuid.UUID) (PersonalData, error)
}

// AgentsSource lists the agents of the actor in ctx (agents.Agents).
type AgentsSource interface {
	// List returns the agents the actor may read that are not archived, by handle; hidden
	// agents are dropped in filter mode.
	List(ctx context.Context) ([]agents.Agent, error)
}

// AgentPresenceSource reads the announced presence of agents (agents.Presences).
type AgentPresenceSource interface {
	// Presences returns the presence of each agent of ids that sent a heartbeat; the others
	// are absent (unknown).
	Presences(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]agents.Presence, error)
}

// FlagsSource evaluates the feature flags for an actor (instance.Flags).
type FlagsSource interface {
	// Evaluate returns every flag, by key, with its value for a.
	Evaluate(ctx context.Context, a actor.Actor) ([]instance.EvaluatedFlag, error)
}

// RunSummarySource lists the agent runs in progress. Wire binds it to the agents module's
// runs (agents.Runs.InProgress), which filter by thread.read themselves.
type RunSummarySource interface {
	// ActiveRuns returns the runs in progress in the threads the actor in ctx may read,
	// oldest first; an empty list, not nil, when there are none.
	ActiveRuns(ctx context.Context) ([]syncmod.RunSummary, error)
}

// SnapshotEncoder writes a snapshot as the JSON body of getSnapshot (the HTTP adapter's
// EncodeSnapshot, which the gateway's ready frame carries too). The snapshot calls it once per
// build and hashes its output for the ETag, so equal tags mean byte-equal bodies.
type SnapshotEncoder interface {
	// EncodeSnapshot returns the JSON object of v (every member but Body and ETag); it fails
	// for a part that does not encode (a setting's value that is not JSON).
	EncodeSnapshot(v syncmod.SnapshotView) ([]byte, error)
}

// SnapshotEncoderFunc adapts a function to SnapshotEncoder.
type SnapshotEncoderFunc func(v syncmod.SnapshotView) ([]byte, error)

// EncodeSnapshot calls f.
func (f SnapshotEncoderFunc) EncodeSnapshot(v syncmod.SnapshotView) ([]byte, error) {
	return f(v)
}

// The outgoing ports of catch-up (app.CatchUp) besides DeciderSource.

// CatchUpLog reads what catch-up needs from the event log (adapters/postgres.Reader).
type CatchUpLog interface {
	// MinRetainedSeq returns the lowest seq retention has not dropped: max(min(seq), horizon
	// + 1). For an empty log ok is false and seq is only horizon + 1; catch-up then uses
	// HeadSeq + 1 (spec 03).
	MinRetainedSeq(ctx context.Context) (seq int64, ok bool, err error)
	// CatchUpPage runs one page's query: at most q.Limit events with q.After < seq <=
	// q.Through that pass q.Filter (domain.Prefilter.Match), in seq order, in one statement
	// over the seq index, and the retention horizon read after them. The rows belong to the
	// caller, which may reuse their slice.
	CatchUpPage(ctx context.Context, q domain.PageQuery) (domain.PageRows, error)
}

// CatchUpVersions reads the head of the log and the sync epoch without a lock
// (instance.Versions).
type CatchUpVersions interface {
	// EventSeq returns the event_seq counter: the seq of the newest committed event.
	EventSeq(ctx context.Context) (int64, error)
	// SyncEpoch returns the instance's sync epoch.
	SyncEpoch(ctx context.Context) (uuid.UUID, error)
}

// CatchUpState reads what Check decides on: the head (the event_seq counter, as
// CatchUpVersions.EventSeq reads it), then the retention edge (CatchUpLog.MinRetainedSeq), then
// the sync epoch, in this order, each without a lock, and may read the permission version
// last. Wire binds it to one pipelined batch of the instance and sync adapters' reads, the
// permission version included, so a check costs one round trip instead of three and the page
// after it reads no permission version; without it, CatchUp makes the three reads one after
// another.
type CatchUpState interface {
	// CheckState returns the three values; errors are the database's, wrapped.
	CheckState(ctx context.Context) (CheckState, error)
}

// CheckState is what CatchUpState reads.
type CheckState struct {
	// Head is the event_seq counter.
	Head int64
	// MinRetainedSeq and Retained are what CatchUpLog.MinRetainedSeq returns: the retention
	// edge, and false for an empty log (MinRetainedSeq is then only horizon + 1).
	MinRetainedSeq int64
	Retained       bool
	// Epoch is the instance's sync epoch.
	Epoch uuid.UUID
	// PermissionVersion is the permission_version counter, read after the head, when
	// PermissionVersionRead; a CatchUpState may leave it unread (the page then reads it).
	PermissionVersion     int64
	PermissionVersionRead bool
}

// PrincipalRefs names the actors of a page's events in one query (identity.Directory).
type PrincipalRefs interface {
	// Refs returns the principals with the given ids; an id without a principal is absent.
	Refs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]identity.PrincipalRef, error)
}
