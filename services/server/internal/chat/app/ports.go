// Package app holds the chat module's use cases: spaces, channels and direct messages,
// threads and messages with their per-thread seq, mentions, and the listings with the actor's
// level and capabilities. Each use case authorizes the actor in ctx itself, right after it
// loaded the row that gives the resource its ancestors, and appends exactly its registered
// events in the transaction of its change. Service implements the ports of the chat root
// package through the views Spaces(), Channels(), Threads(), Messages() and Mentions() (their
// method names clash); the ports it needs are declared here, from its point of view.
package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/actor"
)

// Store keeps the chat tables (spaces, channels, dm_participants, threads, messages,
// mentions, reactions). Every method runs in the transaction of ctx when there is one, so a
// use case writes atomically with its events. Absent rows are problem.ErrNotFound.
type Store interface {
	// InsertSpace stores a new space.
	InsertSpace(ctx context.Context, s chat.Space) error
	// Space returns the space, archived or not.
	Space(ctx context.Context, id uuid.UUID) (chat.Space, error)
	// Spaces returns the spaces that are not archived and that f admits (every space when
	// f.All, else those of f.SpaceIDs), by name (byte order) then id.
	Spaces(ctx context.Context, f SpaceFilter) ([]chat.Space, error)
	// UpdateSpace locks the space, lets change modify it and stores the result when change
	// reports a change, returning the space as it is then; an error from change is returned
	// as is and nothing is stored. It needs the transaction of ctx for the lock.
	UpdateSpace(ctx context.Context, id uuid.UUID, change func(*chat.Space) (bool, error)) (chat.Space, error)

	// InsertChannel stores a new standard channel; domain.ErrChannelNameTaken when a channel
	// of the space that is not archived has the name (compared case-insensitively).
	InsertChannel(ctx context.Context, c chat.Channel) error
	// InsertDirect stores a new direct message with its participants under key, the
	// canonical key of the participant set, unless a direct message has the key already: then
	// it stores nothing and returns that one with created false. Two concurrent calls with one
	// key create one channel (a unique index on the key).
	InsertDirect(ctx context.Context, c chat.Channel, key string) (ch chat.Channel, created bool, err error)
	// Channel returns the channel, archived or not, with its participants if it is a direct
	// message.
	Channel(ctx context.Context, id uuid.UUID) (chat.Channel, error)
	// ChannelsInSpace returns the channels of the space that are not archived, by name (byte
	// order) then id.
	ChannelsInSpace(ctx context.Context, spaceID uuid.UUID) ([]chat.Channel, error)
	// Channels returns, in one query, the channels that are not archived, in no archived
	// space, that f admits, by name (byte order) then id (direct messages, which have no
	// name, first).
	Channels(ctx context.Context, f ChannelFilter) ([]chat.Channel, error)
	// UpdateChannel locks the channel and applies change like UpdateSpace.
	UpdateChannel(ctx context.Context, id uuid.UUID, change func(*chat.Channel) (bool, error)) (chat.Channel, error)

	// InsertThread stores a new thread.
	InsertThread(ctx context.Context, t chat.Thread) error
	// Thread returns the thread.
	Thread(ctx context.Context, id uuid.UUID) (chat.Thread, error)
	// PostMessage gives the thread m.ThreadID's next seq to the new message m and stores it
	// with one mention row per MentionIDs, in one round trip: it advances last_message_seq
	// and version by one under the thread's row lock, which serializes the posters of one
	// thread until their transactions end, so concurrent posters get consecutive seqs without
	// gap or duplicate. The message is stored with that seq (m.Seq is not read) and with
	// m.CreatedAt or, when later, the thread's last activity, so created_at never falls as
	// seq rises; Posting tells both. In a thread of an archived channel it stores nothing and
	// reports ChannelArchived (the caller rolls the advance back). chat.ErrDuplicateKey when
	// m.ExternalKey is taken. It needs the transaction of ctx.
	PostMessage(ctx context.Context, m chat.Message) (Posting, error)
	// ThreadCounters returns, in one query, the threads of the channels whose
	// last_message_seq is above their unread_floor_seq.
	ThreadCounters(ctx context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error)

	// InsertMessage stores a new message and one mention row per MentionIDs;
	// chat.ErrDuplicateKey when its ExternalKey is taken.
	InsertMessage(ctx context.Context, m chat.Message) error
	// Message returns the message with its mentions.
	Message(ctx context.Context, id uuid.UUID) (chat.Message, error)
	// Messages returns at most limit messages of the thread with a seq above after, in seq
	// order, with their mentions.
	Messages(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]chat.Message, error)
	// UpdateMessage locks the message and applies change like UpdateSpace, storing its
	// content, edit and redaction times and replacing its mention rows by MentionIDs; a
	// redaction also removes the message's reactions.
	UpdateMessage(ctx context.Context, id uuid.UUID, change func(*chat.Message) (bool, error)) (chat.Message, error)
	// LockMessage returns the message like Message, locked until the transaction of ctx ends,
	// so that the reaction changes of one message run one after the other (the distinct
	// reaction limit holds) and none lands on a message being deleted.
	LockMessage(ctx context.Context, id uuid.UUID) (chat.Message, error)
	// ReactionState tells, in one query, how many distinct reactions the message holds, whether
	// anyone made the reaction and whether the principal did.
	ReactionState(ctx context.Context, messageID, principalID uuid.UUID, reaction string) (ReactionState, error)
	// InsertReaction stores the principal's reaction; added is false when it existed already.
	InsertReaction(ctx context.Context, r Reaction) (added bool, err error)
	// DeleteReaction removes the principal's reaction; removed is false when there was none.
	DeleteReaction(ctx context.Context, messageID, principalID uuid.UUID, reaction string) (removed bool, err error)
	// Reactions returns, in one query, the reactions of the messages counted for the reader,
	// each message's in the order each reaction was first made; messages without reactions are
	// absent.
	Reactions(ctx context.Context, messageIDs []uuid.UUID, readerID uuid.UUID) (map[uuid.UUID][]chat.ReactionCount, error)
	// CountUnreadMentions answers chat.Mentions.CountUnread in one query.
	CountUnreadMentions(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error)

	// SearchUsable reports whether the query text has a word the index can look for (the
	// query is not empty nor made only of excluded words).
	SearchUsable(ctx context.Context, text string) (bool, error)
	// SearchMessages returns at most spec.Limit messages that match spec.Text, are not
	// redacted, pass spec.Visible and spec's filters and come after spec.After in the search
	// order (rank descending, then id descending), in that order, with their rank and their
	// excerpt headline (domain.MatchStart and domain.MatchStop around the matches).
	SearchMessages(ctx context.Context, spec SearchSpec) ([]SearchRow, error)
}

// SpaceFilter selects spaces for a listing, from the actor's Scope.
type SpaceFilter struct {
	// All admits every space (an instance-wide principal).
	All bool
	// SpaceIDs are admitted besides.
	SpaceIDs []uuid.UUID
}

// ChannelFilter selects channels for a listing, from the actor's Scope: a standard channel
// is admitted by All, by its space or by its id; a direct message only by its participant.
type ChannelFilter struct {
	// All admits every standard channel (an instance-wide principal).
	All bool
	// SpaceIDs admit every standard channel of these spaces.
	SpaceIDs []uuid.UUID
	// ChannelIDs admit these standard channels.
	ChannelIDs []uuid.UUID
	// ParticipantID admits the direct messages this principal takes part in.
	ParticipantID uuid.UUID
}

// Reaction is one principal's reaction to a message, as stored.
type Reaction struct {
	// MessageID is the message reacted to.
	MessageID uuid.UUID
	// PrincipalID is who reacted.
	PrincipalID uuid.UUID
	// Reaction is the shortcode or emoji (domain.Reaction).
	Reaction string
	// CreatedAt is when it was made; the first of a reaction orders the message's reactions.
	CreatedAt time.Time
}

// ReactionState is what adding a reaction needs to know of its message.
type ReactionState struct {
	// Distinct is how many distinct reactions the message holds.
	Distinct int
	// Exists reports whether anyone made the reaction (adding it keeps Distinct).
	Exists bool
	// Made reports whether the principal made it (adding it changes nothing).
	Made bool
}

// SearchSpec is one page of a search as the store runs it.
type SearchSpec struct {
	// Text is the query text (websearch_to_tsquery with the 'simple' configuration).
	Text string
	// Visible is the SQL prefilter from the actor's Scope.
	Visible SearchVisibility
	// SpaceID, ChannelID, ThreadID and AuthorID narrow the search; uuid.Nil for none.
	SpaceID, ChannelID, ThreadID, AuthorID uuid.UUID
	// Before and After bound created_at (exclusive); the zero time for none.
	Before, After time.Time
	// From is where the previous page ended; nil for the first page.
	From *domain.SearchPosition
	// Limit is the most rows of the page.
	Limit int
	// ExcerptWords is the most words of an excerpt (chat.search_excerpt_words).
	ExcerptWords int
}

// SearchVisibility is the prefilter of a search, from the actor's Scope: a superset of the
// messages the actor may read (authorize decides each row), never dropping one it may read.
type SearchVisibility struct {
	// All admits every message of a standard channel (an instance-wide actor); a direct
	// message is admitted only through ChannelIDs, since no instance role reaches it.
	All bool
	// ChannelIDs admit the messages of these channels (granted channels, direct messages the
	// actor takes part in included).
	ChannelIDs []uuid.UUID
	// SpaceIDs admit the messages of the standard channels of these spaces (space grants).
	SpaceIDs []uuid.UUID
}

// SearchRow is one message a search found.
type SearchRow struct {
	// Message is the message with its space and mentions.
	Message chat.Message
	// Rank is its ts_rank for the query.
	Rank float32
	// Headline is ts_headline's excerpt, the matches between domain.MatchStart and
	// domain.MatchStop.
	Headline string
}

// Posting is a thread advanced for a new message.
type Posting struct {
	// Thread is the thread after the advance: its LastMessageSeq is the new message's seq.
	Thread chat.Thread
	// ChannelArchived reports whether the thread's channel is archived, so that the use case
	// refuses the message (and rolls the advance back); nothing was stored then.
	ChannelArchived bool
	// CreatedAt is the stored message's time.
	CreatedAt time.Time
}

// TxRunner runs a function in one transaction carried by its context (kernel/tx.Runner),
// joining the caller's transaction when there is one.
type TxRunner interface {
	// RunInTx runs fn in a transaction and commits when fn returns nil.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// OwnReads marks an author's own posts as read (spec 05a, "Own posts are read"): the read
// state of principal data lives in the sync module, which the composition root binds this
// port to, so chat never reads or writes it itself.
type OwnReads interface {
	// MarkRead moves the author's read state of the thread forward to the post's seq, never
	// backwards, and appends the author's read_state.updated when it moved, in the
	// transaction of ctx (the post's).
	MarkRead(ctx context.Context, p OwnPost) error
}

// OwnPost is a message its author has just posted: who, where, and its seq.
type OwnPost struct {
	// AuthorID is the principal who posted; its read state moves.
	AuthorID uuid.UUID
	// SpaceID is the thread's space; uuid.Nil in a direct message.
	SpaceID uuid.UUID
	// ChannelID is the thread's channel.
	ChannelID uuid.UUID
	// ThreadID is the thread posted in.
	ThreadID uuid.UUID
	// Seq is the new message's seq.
	Seq int64
}

// ownPost is the OwnPost of a message just stored.
func ownPost(m chat.Message) OwnPost {
	return OwnPost{AuthorID: m.AuthorID, SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, Seq: m.Seq}
}

// markOwnRead moves the author's read state to the message just stored, in the post's
// transaction, for people and agents, who read threads. An app is an integration (the git
// ingester, a webhook) whose posts are its output, not something it reads: it keeps no read
// state, so its posts cost no second event (spec 05a, "Own posts are read").
func (s *Service) markOwnRead(ctx context.Context, who actor.Actor, m chat.Message) error {
	if who.Kind == actor.KindApp {
		return nil
	}
	return s.ownReads.MarkRead(ctx, ownPost(m))
}

// Invocations is the agents module's part in a post (ADR 0031), which the composition root
// binds: a person's message invokes the agents it mentions or writes to, and an agent's reply
// carrying an invocation token answers that invocation. Both run in the post's transaction.
type Invocations interface {
	// Answer links the reply to the invocation of its token and marks it answered, returning
	// the invocation's id; a validation error naming invocation_token for a token that is not
	// one of the author's invocations in the thread, problem.ErrConflict for an invocation
	// answered already.
	Answer(ctx context.Context, a InvocationAnswer) (uuid.UUID, error)
	// Invoke makes the invocations of a message just stored (its invocation.requested events
	// follow its message.created).
	Invoke(ctx context.Context, p InvokingPost) error
}

// InvocationAnswer is a reply posted with an invocation token.
type InvocationAnswer struct {
	// Token is the invocation_token of the post.
	Token string
	// MessageID and ThreadID name the reply and its thread.
	MessageID, ThreadID uuid.UUID
}

// InvokingPost is a message just stored, as invocations need it.
type InvokingPost struct {
	// MessageID, ThreadID, ChannelID and SpaceID name and place the message (SpaceID uuid.Nil
	// in a direct message).
	MessageID, ThreadID, ChannelID, SpaceID uuid.UUID
	// MentionIDs are the principals it mentions who may read it.
	MentionIDs []uuid.UUID
	// ParticipantIDs are the participants of its direct message; empty in a standard channel.
	ParticipantIDs []uuid.UUID
}
