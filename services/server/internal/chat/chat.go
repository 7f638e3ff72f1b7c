// Package chat is what makes bothy a chat server: spaces, channels (standard ones in a space and
// direct-message channels of their participants), threads, messages with a per-thread seq, and
// the mentions of principals in them (spec 01, 02).
//
// This root package holds what the module offers to the rest of the server: the ports below
// and the values they exchange. Every use case that changes state appends its registered events
// through the kernel's Appender in the same transaction. The rules (names, lengths, mentions)
// live in domain, the use cases (with their authorization) in app, the chat schema in
// adapters/postgres and the operations in adapters/httpapi; see README.md.
package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/problem"
)

// ChannelKind tells a channel of a space from a direct-message channel.
type ChannelKind string

// The channel kinds of spec 02.
const (
	// ChannelStandard is a named channel in a space.
	ChannelStandard ChannelKind = "standard"
	// ChannelDM is a direct-message channel of its participants, in no space.
	ChannelDM ChannelKind = "dm"
)

// Space groups channels; a grant on it covers every channel in it, also later ones.
type Space struct {
	// ID identifies the space (UUIDv7).
	ID uuid.UUID
	// Name is shown in lists; 1 to domain.MaxNameLen characters after trimming.
	Name string
	// Description is optional; empty for none.
	Description string
	// Version increases on every change of the space; the snapshot reports it.
	Version int64
	// ArchivedAt is when the space was archived; the zero time while it is not.
	ArchivedAt time.Time
	// CreatedAt is when the space was created, in UTC.
	CreatedAt time.Time
}

// Channel is a standard channel of a space or a direct-message channel.
type Channel struct {
	// ID identifies the channel (UUIDv7).
	ID uuid.UUID
	// SpaceID is the space of a standard channel; uuid.Nil for a direct message.
	SpaceID uuid.UUID
	// Kind is standard or dm.
	Kind ChannelKind
	// Name is the channel's name; empty for a direct message.
	Name string
	// Topic is optional; empty for none.
	Topic string
	// ParticipantIDs are the participants of a direct message, sorted; empty for a standard
	// channel.
	ParticipantIDs []uuid.UUID
	// Version increases on every change of the channel.
	Version int64
	// ArchivedAt is when the channel was archived; the zero time while it is not.
	ArchivedAt time.Time
	// CreatedAt is when the channel was created, in UTC.
	CreatedAt time.Time
}

// Thread is a conversation in a channel; it is created with its first message.
type Thread struct {
	// ID identifies the thread (UUIDv7).
	ID uuid.UUID
	// ChannelID is the channel the thread lies in.
	ChannelID uuid.UUID
	// SpaceID is the channel's space; uuid.Nil in a direct message.
	SpaceID uuid.UUID
	// Title is optional; empty for none.
	Title string
	// CreatedBy is the principal who started the thread.
	CreatedBy uuid.UUID
	// CreatedAt is when the thread was created, in UTC.
	CreatedAt time.Time
	// Version increases on every change of the thread (every posted message included).
	Version int64
	// LastMessageSeq is the per-thread seq of the newest message (0 before the first).
	LastMessageSeq int64
	// UnreadFloorSeq: messages at or below it never count as unread (bulk imports).
	UnreadFloorSeq int64
}

// Message is one message of a thread.
type Message struct {
	// ID identifies the message (UUIDv7).
	ID uuid.UUID
	// ThreadID, ChannelID and SpaceID place the message (SpaceID is uuid.Nil in a direct
	// message).
	ThreadID, ChannelID, SpaceID uuid.UUID
	// Seq is the message's number in its thread: 1, 2, 3, ... without gap or duplicate.
	Seq int64
	// AuthorID is the principal who posted it.
	AuthorID uuid.UUID
	// ContentMD is the Markdown text; empty once the message is deleted (redacted).
	ContentMD string
	// MentionIDs are the principals the message mentions who could read its channel when it
	// was posted or last edited, sorted; empty once redacted.
	MentionIDs []uuid.UUID
	// CreatedAt is when it was posted, in UTC.
	CreatedAt time.Time
	// EditedAt is when it was last edited; the zero time if never.
	EditedAt time.Time
	// RedactedAt is when it was deleted; the zero time while it is not.
	RedactedAt time.Time
	// ExternalKey is the natural key of an imported record (unique when set); empty otherwise.
	ExternalKey string
	// InvocationID is the invocation this message answers (posted with its token); uuid.Nil
	// for none. Stored on the message row (chat migration 0005), so every read shows what the
	// post's answer and its message.created showed; the agents module keeps the other side of
	// the link (agents.invocations.reply_message_id).
	InvocationID uuid.UUID
	// Reactions are the message's reactions as one reader sees them (Me is that reader's), in
	// the order each was first made; filled by the reads (Messages.List, Messages.Edit), empty
	// on a new message and on a deleted one.
	Reactions []ReactionCount
}

// ReactionCount is one reaction of a message, counted for a reader.
type ReactionCount struct {
	// Reaction is the shortcode or Unicode emoji as it was sent (domain.Reaction).
	Reaction string
	// Count is how many principals made it, at least 1.
	Count int
	// Me reports whether the reader is one of them.
	Me bool
}

// Redacted reports whether the message was deleted.
func (m Message) Redacted() bool { return !m.RedactedAt.IsZero() }

// SpaceView is a space as one actor sees it: with the actor's role on it and the actions it
// may perform there, so a client can show or hide controls without asking.
type SpaceView struct {
	// Space is the space.
	Space Space
	// Level is the actor's effective role on the space (inherited from the instance
	// included); empty when the actor sees the space only through a grant on one of its
	// channels.
	Level authz.Role
	// Capabilities are the actions the actor may perform on the space, sorted (of
	// space.update, space.archive, channel.create, grant.admin).
	Capabilities []kernel.Action
}

// ChannelView is a channel as one actor sees it.
type ChannelView struct {
	// Channel is the channel.
	Channel Channel
	// Level is the actor's effective role on the channel (inherited included).
	Level authz.Role
	// Capabilities are the actions the actor may perform in the channel, sorted (of
	// thread.create, message.create, channel.update, channel.archive, grant.admin,
	// draft.write, readstate.write).
	Capabilities []kernel.Action
}

// ThreadView is a thread as getThread shows it: what a client needs for the thread's header.
type ThreadView struct {
	// Thread is the thread.
	Thread Thread
	// Channel is the thread's channel, for its name and kind.
	Channel Channel
	// Space is the channel's space, for its name; the zero Space in a direct message.
	Space Space
	// FirstMessage is the message the thread was started with (seq 1).
	FirstMessage Message
	// LastMessageAt is when the newest message (seq Thread.LastMessageSeq) was posted.
	LastMessageAt time.Time
}

// ReplyCount is the number of messages after the first, deleted ones included: every seq
// above 1 was taken by one message.
func (v ThreadView) ReplyCount() int64 { return max(v.Thread.LastMessageSeq-1, 0) }

// Member is a principal who can read a channel, by its grants (authz), with its effective
// role there.
type Member struct {
	// Principal names the principal.
	Principal identity.PrincipalRef
	// Level is the highest role of its grants on the instance, the channel's space and the
	// channel (for a direct message: on the channel only).
	Level authz.Role
}

// MemberPage is one page of a channel's members, in principal id order.
type MemberPage struct {
	// Items are the members of the page.
	Items []Member
	// Next is the cursor of the next page (the last principal id the page considered);
	// uuid.Nil on the last page.
	Next uuid.UUID
}

// SpaceInput is a space to create.
type SpaceInput struct {
	// Name is required: 1 to domain.MaxNameLen characters after trimming.
	Name string
	// Description is optional: at most domain.MaxDescriptionLen characters.
	Description string
}

// ChannelInput is a channel to create in a space.
type ChannelInput struct {
	// SpaceID is the space; it must exist and not be archived.
	SpaceID uuid.UUID
	// Name is required: 1 to domain.MaxNameLen characters after trimming, unique among the
	// space's channels that are not archived.
	Name string
	// Topic is optional: at most domain.MaxTopicLen characters.
	Topic string
}

// ThreadInput is a thread to start, with its first message.
type ThreadInput struct {
	// ChannelID is the channel; it must exist and not be archived.
	ChannelID uuid.UUID
	// Title is optional: at most domain.MaxTitleLen characters.
	Title string
	// ContentMD is the first message: 1 byte to chat.max_message_bytes.
	ContentMD string
	// ExternalKey is the natural key of an imported record, empty otherwise; a thread whose
	// first message carries a key that exists already is refused with ErrDuplicateKey.
	ExternalKey string
}

// MessageInput is a message to post into a thread.
type MessageInput struct {
	// ThreadID is the thread; its channel must not be archived.
	ThreadID uuid.UUID
	// ContentMD is the text: 1 byte to chat.max_message_bytes.
	ContentMD string
	// ExternalKey is the natural key of an imported record, empty otherwise (ErrDuplicateKey
	// when it exists already).
	ExternalKey string
	// InvocationToken, set by an agent replying to an invocation (ADR 0031), links the message
	// to it and answers it; empty otherwise.
	InvocationToken string
}

// ThreadCounter is what unread counting needs of one thread.
type ThreadCounter struct {
	// ThreadID, ChannelID and SpaceID place the thread (SpaceID uuid.Nil in a direct message).
	ThreadID, ChannelID, SpaceID uuid.UUID
	// LastMessageSeq is the seq of the thread's newest message.
	LastMessageSeq int64
	// UnreadFloorSeq is the thread's unread floor.
	UnreadFloorSeq int64
	// Version is the thread's version.
	Version int64
}

// Errors of the chat ports besides the problem kinds of kernel/problem (validation, not
// found, forbidden, conflict), which the edge maps to their responses.
var (
	// ErrDuplicateKey: a message with the same ExternalKey exists already; it wraps
	// problem.ErrConflict. The ingester reads it as "already imported".
	ErrDuplicateKey = fmt.Errorf("%w: a message with this external key exists", problem.ErrConflict)
)

// Spaces creates, lists and archives spaces. Every method authorizes the actor in ctx first
// (authorize.Authorizer) and answers its problems: problem.ErrNotFound for a space the actor
// may not read, exactly as for one that does not exist.
type Spaces interface {
	// Create makes a space (space.create on the instance) and appends space.created.
	Create(ctx context.Context, in SpaceInput) (Space, error)
	// List returns the spaces the actor may read that are not archived, by name then id.
	List(ctx context.Context) ([]SpaceView, error)
	// Archive archives the space (space.archive on it) and appends space.archived; archiving
	// an archived space changes nothing and returns it.
	Archive(ctx context.Context, id uuid.UUID) (Space, error)
	// Read returns the space, archived or not, with the actor's level and capabilities
	// (space.read on it).
	Read(ctx context.Context, id uuid.UUID) (SpaceView, error)
}

// Channels creates, lists and archives channels, direct messages included.
type Channels interface {
	// Create makes a channel in a space (channel.create on the space) and appends
	// channel.created. problem.ErrConflict for a name taken in the space.
	Create(ctx context.Context, in ChannelInput) (Channel, error)
	// CreateDirect opens the direct message of the actor and participantIDs (channel.create on
	// the instance): the participants (the actor included) get member grants through
	// authz.Grants in the same transaction, and channel.created is appended. The same set of
	// participants has one direct message: created reports false when it existed already
	// (nothing is written then). A validation error names participant_ids for an empty list,
	// too many participants, or an id without a principal.
	CreateDirect(ctx context.Context, participantIDs []uuid.UUID) (ch Channel, created bool, err error)
	// ListInSpace returns the channels of the space the actor may read that are not archived,
	// by name then id (space.read on the space).
	ListInSpace(ctx context.Context, spaceID uuid.UUID) ([]ChannelView, error)
	// ListVisible returns every channel the actor may read that is not archived, in every
	// space, and the direct messages it takes part in; for the snapshot. It authorizes
	// nothing beyond filtering each channel.
	ListVisible(ctx context.Context) ([]ChannelView, error)
	// Archive archives the channel (channel.archive on it) and appends channel.archived.
	Archive(ctx context.Context, id uuid.UUID) (Channel, error)
	// Get returns the channel without authorizing; problem.ErrNotFound when there is none.
	// For other modules that authorize themselves (personal data).
	Get(ctx context.Context, id uuid.UUID) (Channel, error)
	// Read returns the channel, archived or not, with the actor's level and capabilities
	// (channel.read on it).
	Read(ctx context.Context, id uuid.UUID) (ChannelView, error)
	// Members returns one page of the principals who can read the channel by their grants
	// (channel.read on it first), in principal id order after the principal id after
	// (uuid.Nil: from the start); limit 0 or less, or above chat.members_page_size, is that
	// page size.
	Members(ctx context.Context, id, after uuid.UUID, limit int) (MemberPage, error)
}

// Threads starts threads and reads them.
type Threads interface {
	// Create starts a thread with its first message (thread.create on the channel) and
	// appends thread.created and message.created.
	Create(ctx context.Context, in ThreadInput) (Thread, Message, error)
	// Get returns the thread without authorizing; problem.ErrNotFound when there is none.
	// For other modules that authorize themselves (read states, drafts).
	Get(ctx context.Context, id uuid.UUID) (Thread, error)
	// Counters returns, in one query, the threads of the channels whose LastMessageSeq is
	// above their UnreadFloorSeq. It authorizes nothing: the caller filters.
	Counters(ctx context.Context, channelIDs []uuid.UUID) ([]ThreadCounter, error)
	// Read returns the thread with its channel, space, first message and the time of its
	// newest message (thread.read on it).
	Read(ctx context.Context, id uuid.UUID) (ThreadView, error)
}

// Messages posts, pages, edits and deletes messages.
type Messages interface {
	// Post adds a message to a thread (message.create on the thread) with the thread's next
	// seq, records its mentions and appends message.created.
	Post(ctx context.Context, in MessageInput) (Message, error)
	// List returns at most limit messages of the thread with a seq above after, in seq order
	// (thread.read on the thread); redacted messages are listed without content.
	List(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]Message, error)
	// Edit replaces the content of a message (message.update: the author as a member, anyone
	// else as an admin of the channel), re-records its mentions and appends message.edited.
	// problem.ErrConflict for a deleted message.
	Edit(ctx context.Context, id uuid.UUID, contentMD string) (Message, error)
	// Delete redacts a message (message.delete, like Edit): its content and mentions are
	// cleared, every earlier event of it is redacted in the log, and message.deleted is
	// appended. Deleting a deleted message changes nothing.
	Delete(ctx context.Context, id uuid.UUID) error
	// Read returns the message as List lists it (thread.read on it).
	Read(ctx context.Context, id uuid.UUID) (Message, error)
}

// Reactions adds and takes back the actor's reactions to a message (ADR 0025). Each principal
// makes each reaction at most once per message, so both methods are idempotent: a change that
// changes nothing appends nothing.
type Reactions interface {
	// Add puts the actor's reaction on the message (reaction.write on the message: members)
	// and appends reaction.added; nothing when the actor made it already. A validation error
	// names reaction for anything but a shortcode or one Unicode emoji (domain.Reaction);
	// problem.ErrConflict for a deleted message, a message of an archived channel, or a new
	// distinct reaction on a message that holds chat.max_reactions_per_message of them.
	Add(ctx context.Context, messageID uuid.UUID, reaction string) error
	// Remove takes the actor's reaction off the message (reaction.write on the message) and
	// appends reaction.removed; nothing when the actor has not made it (a deleted message has
	// no reactions). problem.ErrConflict for a message of an archived channel.
	Remove(ctx context.Context, messageID uuid.UUID, reaction string) error
}

// Mentions answers questions about the mentions of one principal.
type Mentions interface {
	// CountUnread counts, per thread of the channels, the mentions of the principal in
	// messages above both the thread's unread floor and readSeqs[thread] (0 when absent), in
	// one query. Threads without such mentions are absent. It authorizes nothing.
	CountUnread(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error)
}

// Directory tells the authz module which channels and spaces exist and where each channel
// lies, without authz reading chat's tables; it has the method set of authz's
// app.ChannelDirectory, which the composition root binds to it.
type Directory interface {
	// SpacesOfChannels maps each of the channels to its space in one query; direct messages
	// and unknown channels are absent.
	SpacesOfChannels(ctx context.Context, channelIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error)
	// ChannelExists reports whether the channel exists (archived ones included).
	ChannelExists(ctx context.Context, channelID uuid.UUID) (bool, error)
	// SpaceExists reports whether the space exists (archived ones included).
	SpaceExists(ctx context.Context, spaceID uuid.UUID) (bool, error)
	// DirectParticipant reports whether the channel is a direct message (false for a standard
	// or an unknown channel) and whether the principal takes part in it, in one query, on the
	// caller's transaction when ctx carries one (a direct message being created is seen).
	DirectParticipant(ctx context.Context, channelID, principalID uuid.UUID) (direct, participant bool, err error)
}
