package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// ThreadListStore is what the thread list reads of the chat tables.
type ThreadListStore interface {
	// Channel returns the channel, archived or not; problem.ErrNotFound when there is none.
	Channel(ctx context.Context, id uuid.UUID) (chat.Channel, error)
	// ThreadsOfChannel returns at most limit threads of the channel after the position
	// after (the zero position: from the start), most recent activity first, each with the
	// first excerptChars characters of its first message; the counts are left 0.
	ThreadsOfChannel(ctx context.Context, channelID uuid.UUID, after chat.ThreadPosition, limit, excerptChars int) ([]chat.ThreadSummary, error)
	// CountUnreadMentionsInThreads counts, per thread of threadIDs (of the channel), the
	// principal's mentions above both the thread's unread floor and readSeqs[thread] (0 when
	// absent), in one query: the rule of chat.Mentions.CountUnread, the snapshot's, for the
	// threads of one page. Threads without such mentions are absent.
	CountUnreadMentionsInThreads(ctx context.Context, principalID, channelID uuid.UUID, threadIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error)
}

// Unreads is one reader's read positions and unread counts, which the sync module keeps and
// the snapshot reports (spec 03): the composition root binds it to sync's read states and its
// unread rule, so the thread list and the snapshot count alike from one source.
type Unreads interface {
	// Unread returns, for each counter (in its order), the principal's read seq of the
	// thread and the thread's unread count for the principal.
	Unread(ctx context.Context, principalID uuid.UUID, counters []chat.ThreadCounter) ([]ThreadUnread, error)
}

// ThreadUnread is one thread's read position and unread count for one reader.
type ThreadUnread struct {
	// LastReadSeq is the reader's read seq of the thread (0: none).
	LastReadSeq int64
	// UnreadCount is the thread's unread messages for the reader.
	UnreadCount int64
}

// ThreadListDeps are what a ThreadList needs, all required.
type ThreadListDeps struct {
	// Store reads the channel, the page of threads and the mention counts.
	Store ThreadListStore
	// Authorizer decides thread.read on the channel.
	Authorizer authorize.Authorizer
	// Unreads gives the reader's read positions and unread counts (sync).
	Unreads Unreads
	// Config holds chat.threads_page_size and chat.thread_excerpt_chars.
	Config ThreadListConfig
}

// ThreadList implements chat.ThreadList: listChannelThreads' use case.
type ThreadList struct {
	deps ThreadListDeps
}

var _ chat.ThreadList = (*ThreadList)(nil)

// NewThreadList returns the thread list over deps; it fails for a missing dependency or an
// invalid configuration, so a wiring mistake stops the process at start.
func NewThreadList(deps ThreadListDeps) (*ThreadList, error) {
	var errs []error
	if deps.Store == nil {
		errs = append(errs, errors.New("store is nil"))
	}
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Unreads == nil {
		errs = append(errs, errors.New("unreads port is nil"))
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("chat: new thread list: %w", err)
	}
	return &ThreadList{deps: deps}, nil
}

// PageSize is chat.threads_page_size, the default and the cap of a page.
func (l *ThreadList) PageSize() int { return l.deps.Config.PageSize }

// InChannel implements chat.ThreadList. The channel is loaded and thread.read on it authorized
// before anything else is read; then the page, and the reader's counts of exactly its threads:
// the unread counts from the Unreads port (the snapshot's read states and rule) and the
// mention counts by the snapshot's rule, given the same read positions.
func (l *ThreadList) InChannel(ctx context.Context, channelID uuid.UUID, after chat.ThreadPosition, limit int) (chat.ThreadPage, error) {
	page, err := l.inChannel(ctx, channelID, after, limit)
	if err != nil {
		return chat.ThreadPage{}, fmt.Errorf("chat: list channel threads: %w", err)
	}
	return page, nil
}

func (l *ThreadList) inChannel(ctx context.Context, channelID uuid.UUID, after chat.ThreadPosition, limit int) (chat.ThreadPage, error) {
	who, err := actorOf(ctx)
	if err != nil {
		return chat.ThreadPage{}, err
	}
	ch, err := l.deps.Store.Channel(ctx, channelID)
	if err != nil {
		return chat.ThreadPage{}, err
	}
	if err := l.deps.Authorizer.Authorize(ctx, kernel.ActionThreadRead, channelOf(ch.SpaceID, ch.ID)); err != nil {
		return chat.ThreadPage{}, err
	}
	if limit < 1 || limit > l.deps.Config.PageSize {
		limit = l.deps.Config.PageSize
	}
	items, err := l.deps.Store.ThreadsOfChannel(ctx, ch.ID, after, limit, l.deps.Config.ExcerptChars)
	if err != nil {
		return chat.ThreadPage{}, err
	}
	page := chat.ThreadPage{Items: items}
	if len(items) == limit {
		page.Next = items[len(items)-1].Position()
	}
	if len(items) == 0 {
		return page, nil
	}
	counters := make([]chat.ThreadCounter, len(items))
	for i, it := range items {
		th := it.Thread
		counters[i] = chat.ThreadCounter{ThreadID: th.ID, ChannelID: th.ChannelID, SpaceID: th.SpaceID,
			LastMessageSeq: th.LastMessageSeq, UnreadFloorSeq: th.UnreadFloorSeq, Version: th.Version}
	}
	unread, err := l.deps.Unreads.Unread(ctx, who.PrincipalID, counters)
	if err != nil {
		return chat.ThreadPage{}, fmt.Errorf("unread counts: %w", err)
	}
	if len(unread) != len(counters) {
		return chat.ThreadPage{}, fmt.Errorf("unread counts: %d for %d threads", len(unread), len(counters))
	}
	readSeqs := make(map[uuid.UUID]int64, len(items))
	threadIDs := make([]uuid.UUID, len(items))
	for i, u := range unread {
		threadIDs[i] = counters[i].ThreadID
		if u.LastReadSeq > 0 {
			readSeqs[counters[i].ThreadID] = u.LastReadSeq
		}
	}
	mentions, err := l.deps.Store.CountUnreadMentionsInThreads(ctx, who.PrincipalID, ch.ID, threadIDs, readSeqs)
	if err != nil {
		return chat.ThreadPage{}, fmt.Errorf("unread mentions: %w", err)
	}
	for i := range page.Items {
		page.Items[i].UnreadCount = unread[i].UnreadCount
		page.Items[i].MentionCount = int64(mentions[counters[i].ThreadID])
	}
	return page, nil
}
