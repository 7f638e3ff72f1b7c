// Package sync is the event log of bothy and everything clients synchronise with: the
// commit-ordered, gap-free log every state change appends to (spec 02, sync.event_log), its
// retention, the log tail that feeds live events, the personal data of each principal (read
// states, drafts, settings, the sidebar), catch-up and the snapshot.
//
// This root package holds what the module offers to the rest of the server. The event
// appender and the redactor are declared in the kernel (kernel.Appender, kernel.Redactor) so
// that every writing module can append without importing sync; the sync PostgreSQL adapter
// implements them and the composition root binds them. The types below are the module's own
// ports and the values they exchange; see README.md for the tables and the commit phase.
package sync

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/sync/domain"
)

// UpkeepReport says what one run of partition upkeep did to sync.event_log; `bothy maintain`
// prints it as JSON, so operators can see retention happen. Slices are never nil.
type UpkeepReport struct {
	// Created are the partitions this run created, in time order.
	Created []PartitionRange `json:"created"`
	// Dropped are the partitions this run dropped because all of their time range was older
	// than sync.event_retention, in time order.
	Dropped []PartitionRange `json:"dropped"`
	// MovedFromDefault counts the events moved out of the default partition into the time
	// partitions created for them; above zero means upkeep had fallen behind the clock.
	MovedFromDefault int64 `json:"moved_from_default"`
	// HorizonSeq is the retention horizon after the run: the highest seq retention ever
	// dropped (0 when nothing was ever dropped). No seq at or below it is served again.
	HorizonSeq int64 `json:"horizon_seq"`
}

// PartitionRange is one time partition of sync.event_log: events with From <= occurred_at < To.
type PartitionRange struct {
	// Name is the partition's table name within the sync schema.
	Name string `json:"name"`
	// From is the inclusive start of the range, in UTC.
	From time.Time `json:"from"`
	// To is the exclusive end of the range, in UTC.
	To time.Time `json:"to"`
	// LastSeq is, for a dropped partition, the highest seq it held (0 when it was empty).
	LastSeq int64 `json:"last_seq,omitempty"`
}

// Personal is each principal's own data: how far it has read each thread, its unsent drafts,
// its settings and its sidebar (spec 02). The owner of what a write changes is always the
// actor in ctx (kernel/actor); without one a write fails with problem.ErrUnauthenticated.
// Every write authorizes the actor itself, raises the row's version by one (a new row starts
// at 1) and appends its personal event, whose audience is the owner, in the same transaction
// (the caller's, when ctx carries one). Invalid input is a problem.Validation error naming
// the request's JSON field, checked before anything is read; a thread or channel that does
// not exist or that the actor may not read is problem.ErrNotFound.
//
// The readers authorize nothing and take the owner explicitly: they serve the snapshot, which
// reads the actor's own data and filters out what the actor can no longer read.
type Personal interface {
	// UpdateReadState records that the actor has read the thread up to lastReadSeq, lowered
	// to the thread's newest message seq when it is beyond it (readstate.write on the
	// thread), and appends read_state.updated. A read state may move backwards (marking a
	// thread unread). A negative lastReadSeq names last_read_seq.
	UpdateReadState(ctx context.Context, threadID uuid.UUID, lastReadSeq int64) (ReadState, error)
	// SaveDraft stores the actor's draft in the channel, or in the thread threadID of the
	// channel (uuid.Nil: the channel's own draft), replacing the one before (draft.write on
	// the channel), and appends draft.saved. contentMD is 1 to sync.max_draft_bytes bytes of
	// UTF-8 (else a validation error naming content_md). problem.ErrNotFound when the thread
	// does not lie in the channel; problem.ErrConflict when the channel is archived.
	SaveDraft(ctx context.Context, channelID, threadID uuid.UUID, contentMD string) (Draft, error)
	// DeleteDraft removes the actor's draft of the channel or of its thread threadID
	// (uuid.Nil: the channel's own draft) after draft.write on the channel, and appends
	// draft.deleted with the deleted row's version plus one. Deleting a draft that does not
	// exist succeeds and appends nothing. problem.ErrNotFound when the thread does not lie in
	// the channel.
	DeleteDraft(ctx context.Context, channelID, threadID uuid.UUID) error
	// GetDraft returns the actor's draft of the channel or of its thread threadID (uuid.Nil:
	// the channel's own draft) with its text, after draft.write on the channel (the action
	// that keeps drafts: a viewer, who keeps none, gets problem.ErrForbidden).
	// problem.ErrNotFound when there is no such draft or the thread does not lie in the
	// channel.
	GetDraft(ctx context.Context, channelID, threadID uuid.UUID) (Draft, error)
	// PutSetting stores the actor's setting key (setting.write on the actor) and appends
	// setting.updated. The key matches domain.SettingKeyPattern (else a validation error
	// naming key); the value is any JSON but null, at most sync.max_setting_bytes bytes (else
	// one naming value). The value is stored and returned normalized: compact JSON, object
	// members in the database's canonical order, duplicate names collapsed.
	PutSetting(ctx context.Context, key string, value json.RawMessage) (Setting, error)
	// PutSidebar replaces the actor's sidebar (setting.write on the actor) and appends
	// sidebar.updated. At most sync.max_sidebar_sections sections and sync.max_sidebar_channels
	// channel ids in all, section keys of 1 to 64 characters and unique, titles of at most 80
	// (else a validation error naming sections); duplicate channel ids within a section are
	// dropped, channel ids are stored as given otherwise.
	PutSidebar(ctx context.Context, sections []SidebarSection) (Sidebar, error)

	// ReadStates returns the principal's read states keyed by thread id (empty, not nil, for
	// none).
	ReadStates(ctx context.Context, principalID uuid.UUID) (map[uuid.UUID]ReadState, error)
	// Drafts returns the principal's drafts ordered by channel, the channel's own draft
	// before its threads' (empty, not nil, for none).
	Drafts(ctx context.Context, principalID uuid.UUID) ([]Draft, error)
	// Settings returns the principal's settings ordered by key (empty, not nil, for none).
	Settings(ctx context.Context, principalID uuid.UUID) ([]Setting, error)
	// Sidebar returns the principal's sidebar; one that was never stored is empty, with
	// Version 0.
	Sidebar(ctx context.Context, principalID uuid.UUID) (Sidebar, error)
}

// ReadState is how far one principal has read one thread; unread counts are the thread's
// newest message seq minus LastReadSeq.
type ReadState struct {
	// PrincipalID is the reader.
	PrincipalID uuid.UUID
	// ThreadID is the thread read.
	ThreadID uuid.UUID
	// ChannelID is the thread's channel, kept so that the snapshot can drop the read states
	// of channels the reader can no longer read without asking chat for every thread.
	ChannelID uuid.UUID
	// LastReadSeq is the per-thread seq of the last message read (0: none).
	LastReadSeq int64
	// Version rises by one on every write; clients apply events by it.
	Version int64
}

// Draft is an unsent message of one principal in a channel or in one of its threads.
type Draft struct {
	// PrincipalID is the author.
	PrincipalID uuid.UUID
	// ChannelID is the channel the draft is for.
	ChannelID uuid.UUID
	// ThreadID is the thread of the channel the draft replies to; uuid.Nil for the
	// channel's own draft (a new thread).
	ThreadID uuid.UUID
	// ContentMD is the Markdown text.
	ContentMD string
	// Version rises by one on every save; a draft deleted and saved again starts at 1.
	Version int64
	// UpdatedAt is when it was last saved, in UTC.
	UpdatedAt time.Time
}

// Setting is one named preference of one principal, whose meaning only clients know.
type Setting struct {
	// PrincipalID is the owner.
	PrincipalID uuid.UUID
	// Key names the setting (domain.SettingKeyPattern).
	Key string
	// Value is any JSON value but null, as stored (normalized).
	Value json.RawMessage
	// Version rises by one on every write.
	Version int64
}

// SidebarSection is one section of a sidebar: a titled, ordered group of channels.
type SidebarSection struct {
	// Key identifies the section within the sidebar (unique, 1 to 64 characters).
	Key string
	// Title is shown above the section (at most 80 characters, may be empty).
	Title string
	// Collapsed tells whether the client shows the section folded.
	Collapsed bool
	// ChannelIDs are the section's channels in the owner's order, without duplicates once
	// stored; they may name channels the owner can no longer read (the snapshot filters).
	ChannelIDs []uuid.UUID
}

// Sidebar is how one principal arranges its channels: the whole list of sections, replaced
// at once.
type Sidebar struct {
	// PrincipalID is the owner.
	PrincipalID uuid.UUID
	// Sections are the sections in order; empty, not nil, when there are none.
	Sections []SidebarSection
	// Version rises by one on every write; 0 for a sidebar never stored.
	Version int64
}

// Snapshot builds the state a client starts from (spec 03, "Snapshot"): structure, counters
// and versions for the actor in ctx, never a message's or a draft's text. getSnapshot and the
// gateway's ready frame both call it, so REST and the gateway deliver the same snapshot.
type Snapshot interface {
	// Build authorizes sync.snapshot.read on the instance for the actor in ctx and returns
	// its snapshot. HeadSeq and SyncEpoch are read before every other part, so every change
	// with seq <= HeadSeq is contained and the client continues catch-up from HeadSeq.
	// Concurrent calls of one actor at one permission version share one build: the view,
	// its Body included, is shared and must not be modified. Errors:
	// problem.ErrUnauthenticated without an actor; the problem kinds of authorize
	// (problem.ErrDevicePending, problem.ErrForbidden, problem.ErrNotFound) when the actor
	// may not read snapshots; ctx.Err() when ctx ends first; anything else is unexpected (a
	// source failed).
	Build(ctx context.Context) (SnapshotView, error)
}

// SnapshotView is one snapshot, member for member the Snapshot schema of the API (plus Body,
// those members encoded, and ETag, which travels as a header). Every slice is empty, not nil,
// when it has no entry, and no part names a channel the actor cannot read: every channel id in
// Sidebar, UnreadThreads and Drafts is one of Channels.
type SnapshotView struct {
	// HeadSeq is the head of the event log, read first: catch-up continues after it.
	HeadSeq int64
	// SyncEpoch is the instance's sync epoch, read right after HeadSeq.
	SyncEpoch uuid.UUID
	// PermissionVersion is the permission version of the actor's Scope the snapshot was
	// filtered with, read after HeadSeq: a permissions.changed event after HeadSeq with a
	// higher version tells the client to load a new snapshot.
	PermissionVersion int64
	// IsOwner reports whether the actor owns the instance.
	IsOwner bool
	// Principal names the actor.
	Principal identity.PrincipalRef
	// Instance is the instance (getInstance's InstanceInfo).
	Instance instance.Info
	// Spaces are the spaces the actor may read that are not archived, with its level and
	// capabilities, as listSpaces orders them (by name, then id).
	Spaces []chat.SpaceView
	// Channels are the channels the actor may read that are not archived (nor their space),
	// and the direct messages it takes part in, with its level and capabilities, by name
	// then id (direct messages, which have no name, first).
	Channels []chat.ChannelView
	// Sidebar is the actor's sidebar with every channel id it cannot read removed (sections
	// stay, also when that leaves them empty); empty with Version 0 for agents and apps.
	Sidebar Sidebar
	// UnreadThreads are the threads of Channels with unread messages or unread mentions of
	// the actor that it may read (thread.read), by channel id then thread id; empty for
	// agents and apps.
	UnreadThreads []UnreadThread
	// ActiveRuns are the agent runs in progress in the threads the actor may read, oldest
	// first.
	ActiveRuns []RunSummary
	// Agents are the agents the actor may read that are not archived, by handle, each with
	// its announced runtime state (AgentStateUnknown before its first heartbeat).
	Agents []AgentPresence
	// Settings are the actor's settings, by key; empty for agents and apps.
	Settings []Setting
	// Drafts name the actor's drafts in Channels, by channel (the channel's own draft first)
	// then thread, without their text; empty for agents and apps.
	Drafts []DraftRef
	// Features are the feature flags evaluated for the actor, by key.
	Features []instance.EvaluatedFlag
	// Body is the JSON object of every member above as getSnapshot sends it and the gateway's
	// ready frame carries it, encoded once per build (app.SnapshotDeps.Encoder) and shared by
	// every call that joined the build; read-only.
	Body []byte
	// ETag is the strong entity tag of Body (app.SnapshotETag), for the ETag header and
	// If-None-Match; it is no member of the JSON body.
	ETag string
}

// UnreadThread is a thread with unread messages or unread mentions of the actor. Counts
// are computed, never stored (spec 02): from the thread's counters and the actor's read
// state.
type UnreadThread struct {
	// ThreadID is the thread.
	ThreadID uuid.UUID
	// ChannelID is the thread's channel.
	ChannelID uuid.UUID
	// SpaceID is the channel's space; uuid.Nil in a direct message.
	SpaceID uuid.UUID
	// LastMessageSeq is the per-thread seq of the thread's newest message.
	LastMessageSeq int64
	// LastReadSeq is the actor's read position in the thread (0 when it never read it).
	LastReadSeq int64
	// UnreadCount is LastMessageSeq - max(LastReadSeq, the thread's unread floor), never
	// below 0.
	UnreadCount int64
	// MentionCount is the number of mentions of the actor in messages above both its read
	// position and the thread's unread floor.
	MentionCount int64
}

// RunSummary is an agent run in progress (queued or running) in a thread the actor may read,
// from the agents module's runs (ADR 0027); run.created and run.updated carry the same
// members, so a client keeps its list current from the events.
type RunSummary struct {
	// ID identifies the run.
	ID uuid.UUID
	// AgentID is the agent that works.
	AgentID uuid.UUID
	// ThreadID is the thread the run works in, ChannelID that thread's channel.
	ThreadID, ChannelID uuid.UUID
	// RequestedBy is the person on whose behalf the agent works.
	RequestedBy uuid.UUID
	// InvocationID is the invocation the run answers; uuid.Nil when none.
	InvocationID uuid.UUID
	// State is queued or running.
	State string
	// Progress is the agent's last progress text; empty when none.
	Progress string
	// Version is the run's version (1 when created, one more per change).
	Version int64
	// CreatedAt and UpdatedAt are when the run was created and last changed, in UTC.
	CreatedAt, UpdatedAt time.Time
}

// AgentState is an agent's runtime state as the snapshot reports it.
type AgentState string

// The runtime states of the API's AgentRuntimeState, as the agents module's presence
// announces them (agents.PresenceState).
const (
	// AgentStateUnknown: no heartbeat tells the agent's state.
	AgentStateUnknown AgentState = "unknown"
	// AgentStateOnline: the agent's heartbeats arrive (agents.presence_idle_after).
	AgentStateOnline AgentState = "online"
	// AgentStateIdle: the agent's last heartbeat is older than agents.presence_idle_after.
	AgentStateIdle AgentState = "idle"
	// AgentStateBusy: reserved for an agent working on a run; presence never reports it.
	AgentStateBusy AgentState = "busy"
	// AgentStateOffline: no heartbeat for longer than agents.presence_offline_after.
	AgentStateOffline AgentState = "offline"
)

// AgentPresence is an agent the actor may read, with its runtime state.
type AgentPresence struct {
	// Agent names the agent (kind agent).
	Agent identity.PrincipalRef
	// State is its runtime state.
	State AgentState
	// ReportedBillingMode is the billing mode announced with State; empty for none.
	ReportedBillingMode string
}

// DraftRef says that the actor has a draft, with its version, never its text: a client
// compares Version with the draft it holds; the text travels only in draft.saved events.
type DraftRef struct {
	// ChannelID is the draft's channel.
	ChannelID uuid.UUID
	// ThreadID is the thread the draft replies to; uuid.Nil for the channel's own draft.
	ThreadID uuid.UUID
	// Version is the draft's version.
	Version int64
}

// CatchUp is catch-up (spec 03): every durable event after a cursor that the actor may see at
// delivery time, in seq order, one page at a time, or the reason the cursor cannot be served.
// listEvents and the gateway's resume use it alike, so both follow the same rules. Callers
// authorize events.catch_up on the instance first; Check authorizes nothing, Page decides per
// event for the actor in ctx.
//
// A caller runs Check, answers resync_required when it gives a Reason, and otherwise runs
// Page with the checked head, as often as it likes, until NextCursor reaches the head:
//
//	res, err := c.Check(ctx, CheckInput{After: after, Epoch: epoch})
//	if err != nil { return err }
//	if err := res.Err(); err != nil { return err } // 410 resync_required
//	page, err := c.Page(ctx, PageInput{After: after, Head: res.HeadSeq, Limit: limit})
type CatchUp interface {
	// Check reads the head (the event_seq counter, never max(seq)), the lowest retained
	// seq and the sync epoch, and decides in spec 03's order whether in.After can be
	// served. A Reason is a result, not an error. A negative After is a problem.Validation
	// naming after; other errors are the database's.
	Check(ctx context.Context, in CheckInput) (CheckResult, error)
	// Page returns the envelopes after in.After up to in.Head that the actor in ctx may see
	// now, at most in.Limit (capped to sync.catchup_page_size; below 1 means that size), and
	// the cursor to continue from. It reads at most sync.catchup_scan_window seqs of the log,
	// so a short or empty page with NextCursor below in.Head means "keep paging". Personal
	// events reach only their audience; every other event needs authorize(actor,
	// receive_action, event resource) in filter mode. problem.ErrUnauthenticated without an
	// actor; a problem.Validation naming after for a negative After or one beyond in.Head; a
	// *ResyncError (reason retention) when retention dropped events after in.After since
	// Check; other errors are the database's.
	Page(ctx context.Context, in PageInput) (PageResult, error)
}

// CheckInput is the cursor a client catches up from.
type CheckInput struct {
	// After is the last seq the client checked (0 for the start); at least 0.
	After int64
	// Epoch is the sync epoch the cursor was issued under (EpochOf); the zero value when the
	// client sent none (then only cursor_ahead guards against a foreign cursor). Any epoch
	// given that is not the instance's, the nil UUID included, is epoch_changed.
	Epoch CursorEpoch
}

// CursorEpoch is the sync epoch a client names with its cursor (domain.CursorEpoch).
type CursorEpoch = domain.CursorEpoch

// EpochOf is the CursorEpoch of a client that named id, on either transport.
func EpochOf(id uuid.UUID) CursorEpoch { return domain.EpochOf(id) }

// CheckResult is the state of the log a cursor was checked against, and the verdict.
type CheckResult struct {
	// HeadSeq is the event_seq counter: every event with seq <= HeadSeq is committed and
	// visible. Page with it as Head.
	HeadSeq int64
	// MinRetainedSeq is the lowest seq still served: max(min(seq), retention horizon + 1),
	// or HeadSeq + 1 when the log is empty.
	MinRetainedSeq int64
	// SyncEpoch is the instance's sync epoch.
	SyncEpoch uuid.UUID
	// Reason is why the cursor cannot be served; empty when it can.
	Reason ResyncReason
	// Recovery is what the client does about Reason (Reason.Recovery()); empty with it.
	Recovery Recovery
	// RetryAfter is how long the client waits before it recovers: sync.resync_retry_base
	// with a jitter of plus or minus half of it; 0 without a Reason.
	RetryAfter time.Duration
	// PermissionVersion is the permission_version counter read with the head, when
	// PermissionVersionRead (wire's check reads it in the same round trip). A caller that
	// pages at once passes both on in PageInput, so that the page reads no version of its own.
	PermissionVersion     int64
	PermissionVersionRead bool
}

// OldestSeq is the oldest cursor still served (MinRetainedSeq - 1), the oldest_seq of every
// EventPage and resync_required body: a client whose cursor falls below it gets retention.
func (r CheckResult) OldestSeq() int64 {
	return r.MinRetainedSeq - 1
}

// PageInput is one page request.
type PageInput struct {
	// After is the cursor: the page holds events with seq > After.
	After int64
	// Head is CheckResult.HeadSeq of the Check before: the page never goes beyond it.
	Head int64
	// Limit is the most events the page holds; values below 1 or above
	// sync.catchup_page_size mean sync.catchup_page_size.
	Limit int
	// PermissionVersion, when PermissionVersionRead, is CheckResult.PermissionVersion of the
	// Check right before: the page takes the actor's Scope at that version (cached, or built
	// from the grants) instead of reading the counter again. Only for a page that follows its
	// Check at once (listEvents): a caller that pages on for longer (the gateway's resume)
	// leaves it unset, so each page decides with the permissions current when it is read.
	PermissionVersion     int64
	PermissionVersionRead bool
}

// PageResult is one page of catch-up.
type PageResult struct {
	// Events are the envelopes (domain.AppendEnvelope, for the actor's kind: trace_context
	// only for agents) in seq order; empty, not nil, when the page delivers nothing.
	Events []json.RawMessage
	// NextCursor is the last seq the page checked, not the last it delivered: pass it as
	// After. It equals Head when the client is caught up.
	NextCursor int64
	// Release, when not nil, hands the buffer Events are views of back for the next page.
	// Call it once, after the last use of Events (a writer calls it once it has copied or
	// sent them); a caller that never calls it only forgoes the reuse.
	Release func()
}

// ResyncReason says why a cursor cannot be served (domain.Reason); the constants below are
// its values, in the order Check decides them.
type ResyncReason = domain.Reason

// The resync reasons of spec 03.
const (
	// ResyncEpochChanged: the cursor belongs to another sync epoch (a restored database).
	ResyncEpochChanged = domain.ReasonEpochChanged
	// ResyncCursorAhead: the cursor is beyond the head (recovery retry).
	ResyncCursorAhead = domain.ReasonCursorAhead
	// ResyncRetention: retention dropped events after the cursor.
	ResyncRetention = domain.ReasonRetention
	// ResyncTooFarBehind: the cursor is more than sync.catchup_max_events behind.
	ResyncTooFarBehind = domain.ReasonTooFarBehind
)

// Recovery is what a client does after resync_required (domain.Recovery): RecoverySnapshot or
// RecoveryRetry.
type Recovery = domain.Recovery

// The recoveries of a resync_required.
const (
	// RecoverySnapshot: load a snapshot and continue from its head_seq.
	RecoverySnapshot = domain.RecoverySnapshot
	// RecoveryRetry: try again after RetryAfter (cursor_ahead).
	RecoveryRetry = domain.RecoveryRetry
)
