package chat

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// ThreadSummary is a thread as a channel's thread list (listChannelThreads) shows it to one
// reader: the thread, its activity, the start of its first message and the reader's counts.
type ThreadSummary struct {
	// Thread is the thread.
	Thread Thread
	// LastMessageAt is when the newest message was posted: the list's order.
	LastMessageAt time.Time
	// FirstMessageExcerpt is the first chat.thread_excerpt_chars characters of the first
	// message's Markdown; empty once that message is redacted.
	FirstMessageExcerpt string
	// FirstMessageRedacted reports whether the first message is deleted.
	FirstMessageRedacted bool
	// UnreadCount is the reader's unread messages in the thread, as the snapshot counts them.
	UnreadCount int64
	// MentionCount is the reader's unread mentions in the thread, as the snapshot counts them.
	MentionCount int64
}

// ReplyCount is how many messages follow the first, deleted ones included: seqs have no gaps.
func (s ThreadSummary) ReplyCount() int64 {
	return max(0, s.Thread.LastMessageSeq-1)
}

// Position is where the thread stands in activity order, what a cursor names.
func (s ThreadSummary) Position() ThreadPosition {
	return ThreadPosition{LastMessageAt: s.LastMessageAt, ID: s.Thread.ID}
}

// ThreadPosition is a place in a channel's activity order: (LastMessageAt, ID), both
// descending. The zero position is before the first thread (the first page).
type ThreadPosition struct {
	// LastMessageAt is the activity time of the thread at the position.
	LastMessageAt time.Time
	// ID is the thread's id, which orders threads of one activity time.
	ID uuid.UUID
}

// IsZero reports whether p is the start of the list.
func (p ThreadPosition) IsZero() bool {
	return p.LastMessageAt.IsZero() && p.ID == uuid.Nil
}

// ThreadPage is one page of a channel's threads.
type ThreadPage struct {
	// Items are the page's threads, most recent activity first.
	Items []ThreadSummary
	// Next is the position to pass as after for the next page; zero on the last page (a page
	// that is not full).
	Next ThreadPosition
}

// ThreadList lists a channel's threads for the actor in ctx.
type ThreadList interface {
	// InChannel returns at most limit threads of the channel after the position after, most
	// recent activity first (thread.read on the channel: a channel the actor cannot read is
	// problem.ErrNotFound like a missing one). limit below 1 or above chat.threads_page_size
	// is that page size. The counts are the actor's, by the snapshot's sources and rule.
	InChannel(ctx context.Context, channelID uuid.UUID, after ThreadPosition, limit int) (ThreadPage, error)
}
