package postgres

import (
	"context"
	_ "embed" // the thread list's query
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
)

var (
	//go:embed queries/threads_of_channel_page.sql
	threadsOfChannelPage string
	//go:embed queries/mentions_unread_count_of_threads.sql
	mentionsUnreadCountOfThreads string
)

var _ app.ThreadListStore = (*Store)(nil)

// firstPosition is the position before every thread: 'infinity' sorts after every time, so
// the row comparison of the page's query admits every thread, and the query needs no
// second form without a position.
var firstPosition = pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}

// maxID sorts after every id of the position 'infinity' (there is none).
var maxID = uuid.UUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// PageMentionSeqs is how many of a thread's newest mention seqs of the reader the page's
// statement carries per thread. Sizing only: the counts are exact at any value (a thread whose
// seqs stop above the reader's read position is counted by CountUnreadMentionsInThreads); it
// bounds what one page reads for a reader mentioned very often, no input.
const PageMentionSeqs = 32

// ChannelThreads implements app.ThreadListStore: the channel (queries/channel_get.sql) and the
// page with the reader's newest mention seqs (queries/threads_of_channel_page.sql, over the
// index threads_channel_activity and one probe of mentions_principal per thread) in one batch,
// one round trip.
func (s *Store) ChannelThreads(ctx context.Context, q app.ChannelThreadsQuery) (app.ChannelThreads, error) {
	at, id := firstPosition, maxID
	if !q.After.IsZero() {
		at, id = pgtype.Timestamptz{Time: q.After.LastMessageAt, Valid: true}, q.After.ID
	}
	var b pgx.Batch
	b.Queue(channelGet, q.ChannelID)
	b.Queue(threadsOfChannelPage, q.ChannelID, at, id, q.Limit, min(q.ExcerptChars, math.MaxInt32), q.Reader, PageMentionSeqs)
	res := s.runner.DB(ctx).SendBatch(ctx, &b)
	out, err := readChannelThreads(res, q.Limit)
	if cerr := res.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("threads of channel: %w", cerr)
	}
	if err != nil {
		return app.ChannelThreads{}, err
	}
	return out, nil
}

// readChannelThreads reads the results of ChannelThreads' batch.
func readChannelThreads(res pgx.BatchResults, limit int) (app.ChannelThreads, error) {
	ch, err := scanChannel(res.QueryRow())
	if err != nil {
		return app.ChannelThreads{}, notFound(err, "channel")
	}
	rows, err := res.Query()
	if err != nil {
		return app.ChannelThreads{}, fmt.Errorf("threads of channel: %w", err)
	}
	var (
		it     chat.ThreadSummary
		space  pgtype.UUID
		lastAt time.Time
		seqs   []int64
		out    = app.ChannelThreads{Channel: ch, Items: make([]chat.ThreadSummary, 0, limit), Mentions: make([]app.MentionSeqs, 0, limit)}
	)
	th := &it.Thread
	_, err = pgx.ForEachRow(rows, []any{&th.ID, &th.ChannelID, &space, &th.Title, &th.CreatedBy, &th.CreatedAt, &th.Version,
		&th.LastMessageSeq, &th.UnreadFloorSeq, &lastAt, &it.FirstMessageExcerpt, &it.FirstMessageRedacted, &seqs}, func() error {
		th.SpaceID = fromUUID(space)
		th.CreatedAt = th.CreatedAt.UTC()
		it.LastMessageAt = lastAt.UTC()
		out.Items = append(out.Items, it)
		out.Mentions = append(out.Mentions, app.MentionSeqs{Seqs: seqs, Complete: len(seqs) < PageMentionSeqs})
		seqs = nil
		return nil
	})
	if err != nil {
		return app.ChannelThreads{}, fmt.Errorf("threads of channel: %w", err)
	}
	return out, nil
}

// CountUnreadMentionsInThreads implements app.ThreadListStore with one query that probes the
// mention index once per thread (queries/mentions_unread_count_of_threads.sql).
func (s *Store) CountUnreadMentionsInThreads(ctx context.Context, principalID, channelID uuid.UUID, threadIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	seqs := make([]int64, len(threadIDs))
	for i, id := range threadIDs {
		seqs[i] = readSeqs[id]
	}
	rows, err := s.runner.DB(ctx).Query(ctx, mentionsUnreadCountOfThreads, principalID, channelID, nonNil(threadIDs), seqs)
	if err != nil {
		return nil, fmt.Errorf("count unread mentions in threads: %w", err)
	}
	out := make(map[uuid.UUID]int, len(threadIDs))
	var (
		thread uuid.UUID
		n      int64
	)
	_, err = pgx.ForEachRow(rows, []any{&thread, &n}, func() error {
		out[thread] = int(n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count unread mentions in threads: %w", err)
	}
	return out, nil
}
