package postgres

import (
	"context"
	_ "embed" // the read states of a page of threads
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	syncmod "bothy.example.com/server/internal/sync"
)

//go:embed queries/read_states_of_threads.sql
var readStatesOfThreads string

// ReadStatesOfThreads returns the principal's read states of the threads, keyed by thread id
// (empty, not nil, for none): the rows ReadStates reads, for a page of threads only, so a
// channel's thread list (listChannelThreads) reads as many read states as it shows threads,
// not every one its reader has.
func (s *PersonalStore) ReadStatesOfThreads(ctx context.Context, principalID uuid.UUID, threadIDs []uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error) {
	out := make(map[uuid.UUID]syncmod.ReadState, len(threadIDs))
	if len(threadIDs) == 0 {
		return out, nil
	}
	rows, err := s.runner.DB(ctx).Query(ctx, readStatesOfThreads, principalID, threadIDs)
	if err != nil {
		return nil, fmt.Errorf("sync: read states of threads: %w", err)
	}
	var rs syncmod.ReadState
	_, err = pgx.ForEachRow(rows, []any{&rs.PrincipalID, &rs.ThreadID, &rs.ChannelID, &rs.LastReadSeq, &rs.Version}, func() error {
		out[rs.ThreadID] = rs
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sync: read states of threads: %w", err)
	}
	return out, nil
}
