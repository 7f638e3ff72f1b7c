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

// ThreadsOfChannel implements app.ThreadListStore with one query over the index
// threads_channel_activity (queries/threads_of_channel_page.sql).
func (s *Store) ThreadsOfChannel(ctx context.Context, channelID uuid.UUID, after chat.ThreadPosition, limit, excerptChars int) ([]chat.ThreadSummary, error) {
	at, id := firstPosition, maxID
	if !after.IsZero() {
		at, id = pgtype.Timestamptz{Time: after.LastMessageAt, Valid: true}, after.ID
	}
	rows, err := s.runner.DB(ctx).Query(ctx, threadsOfChannelPage, channelID, at, id, limit, min(excerptChars, math.MaxInt32))
	if err != nil {
		return nil, fmt.Errorf("threads of channel: %w", err)
	}
	var (
		it     chat.ThreadSummary
		space  pgtype.UUID
		out    = make([]chat.ThreadSummary, 0, limit)
		lastAt time.Time
	)
	th := &it.Thread
	_, err = pgx.ForEachRow(rows, []any{&th.ID, &th.ChannelID, &space, &th.Title, &th.CreatedBy, &th.CreatedAt, &th.Version,
		&th.LastMessageSeq, &th.UnreadFloorSeq, &lastAt, &it.FirstMessageExcerpt, &it.FirstMessageRedacted}, func() error {
		th.SpaceID = fromUUID(space)
		th.CreatedAt = th.CreatedAt.UTC()
		it.LastMessageAt = lastAt.UTC()
		out = append(out, it)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("threads of channel: %w", err)
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
