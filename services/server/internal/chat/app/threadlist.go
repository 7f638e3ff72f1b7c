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
	// ChannelThreads returns, in one round trip, the channel of q (archived or not;
	// problem.ErrNotFound when there is none) and at most q.Limit of its threads after the
	// position q.After (the zero position: from the start), most recent activity first, each
	// with the first q.ExcerptChars characters of its first message and the newest seqs of
	// its messages above its unread floor that mention q.Reader; the counts are left 0.
	ChannelThreads(ctx context.Context, q ChannelThreadsQuery) (ChannelThreads, error)
	// CountUnreadMentionsInThreads counts, per thread of threadIDs (of the channel), the
	// principal's mentions above both the thread's unread floor and readSeqs[thread] (0 when
	// absent), in one query: the rule of chat.Mentions.CountUnread, the snapshot's, for the
	// threads of one page. Threads without such mentions are absent. The list asks it only for
	// the threads whose newest mention seqs do not reach down to the reader's read position.
	CountUnreadMentionsInThreads(ctx context.Context, principalID, channelID uuid.UUID, threadIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error)
}

// ChannelThreadsQuery is one page of a channel's threads as one reader asks for it.
type ChannelThreadsQuery struct {
	// ChannelID is the channel.
	ChannelID uuid.UUID
	// Reader is whose mentions come with the page.
	Reader uuid.UUID
	// After is the position the page starts after; zero for the first page.
	After chat.ThreadPosition
	// Limit is the most threads the page has; ExcerptChars the length of the excerpts.
	Limit, ExcerptChars int
}

// ChannelThreads is a channel with one page of its threads and the reader's newest mentions
// in each of them.
type ChannelThreads struct {
	// Channel is the channel.
	Channel chat.Channel
	// Items are the page's threads, most recent activity first; the counts are 0.
	Items []chat.ThreadSummary
	// Mentions are, per item (in its order), the reader's newest mentions in the thread.
	Mentions []MentionSeqs
}

// MentionSeqs are the seqs of a thread's newest messages above its unread floor that mention
// one reader, newest first: all of them when Complete, else only the newest (the store reads
// a bounded number per thread, so a page costs the same however often a reader was mentioned).
type MentionSeqs struct {
	// Seqs are the seqs, newest first.
	Seqs []int64
	// Complete reports whether Seqs are all such mentions of the thread.
	Complete bool
}

// CountAbove returns how many of the mentions lie above the read seq read, and whether that
// is the count of all of the thread's: it is when the seqs are complete or reach down to read
// (every mention above read is then among them).
func (m MentionSeqs) CountAbove(read int64) (n int, exact bool) {
	for _, s := range m.Seqs {
		if s <= read {
			return n, true
		}
		n++
	}
	return n, m.Complete
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

// InChannel implements chat.ThreadList. The channel is loaded with the page and the reader's
// newest mentions in its threads (one round trip) and thread.read on it authorized before
// anything else is read or returned; then the reader's counts of exactly the page's threads:
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
	if limit < 1 || limit > l.deps.Config.PageSize {
		limit = l.deps.Config.PageSize
	}
	got, err := l.deps.Store.ChannelThreads(ctx, ChannelThreadsQuery{
		ChannelID: channelID, Reader: who.PrincipalID, After: after, Limit: limit, ExcerptChars: l.deps.Config.ExcerptChars,
	})
	if err != nil {
		return chat.ThreadPage{}, err
	}
	ch := got.Channel
	// The page came with the channel, in the same round trip; nothing of it leaves this
	// function, nor is anything else read, before thread.read on the channel is decided.
	if err := l.deps.Authorizer.Authorize(ctx, kernel.ActionThreadRead, channelOf(ch.SpaceID, ch.ID)); err != nil {
		return chat.ThreadPage{}, err
	}
	items := got.Items
	if len(got.Mentions) != len(items) {
		return chat.ThreadPage{}, fmt.Errorf("mentions of %d threads for %d threads", len(got.Mentions), len(items))
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
	// The mention counts by the snapshot's rule (above the floor, which the seqs already are,
	// and above the read position) from the page's seqs; the few threads whose seqs stop above
	// the reader's position are counted by the store.
	var (
		rest     []int
		restIDs  []uuid.UUID
		restRead = map[uuid.UUID]int64{}
	)
	for i := range page.Items {
		page.Items[i].UnreadCount = unread[i].UnreadCount
		n, exact := got.Mentions[i].CountAbove(unread[i].LastReadSeq)
		page.Items[i].MentionCount = int64(n)
		if !exact {
			rest, restIDs = append(rest, i), append(restIDs, counters[i].ThreadID)
			if unread[i].LastReadSeq > 0 {
				restRead[counters[i].ThreadID] = unread[i].LastReadSeq
			}
		}
	}
	if len(rest) == 0 {
		return page, nil
	}
	mentions, err := l.deps.Store.CountUnreadMentionsInThreads(ctx, who.PrincipalID, ch.ID, restIDs, restRead)
	if err != nil {
		return chat.ThreadPage{}, fmt.Errorf("unread mentions: %w", err)
	}
	for _, i := range rest {
		page.Items[i].MentionCount = int64(mentions[counters[i].ThreadID])
	}
	return page, nil
}
