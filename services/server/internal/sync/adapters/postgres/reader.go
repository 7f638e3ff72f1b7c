package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/sync/domain"
)

// ErrInvalidLimit is returned by EventsAfter for a limit below 1.
var ErrInvalidLimit = errors.New("sync: limit must be at least 1")

// Reader reads the event log by seq, for the log tail and catch-up. Its statements run in the
// transaction of the context when there is one, else on the pool.
type Reader struct {
	runner *tx.Runner
}

// NewReader returns a Reader on runner.
func NewReader(runner *tx.Runner) *Reader {
	return &Reader{runner: runner}
}

// EventsAfter returns at most limit events with seq > after, in ascending seq order, with
// their payloads as stored (reduced to ids when redacted). Because seqs are taken in commit
// order under the counter lock, the committed events always form a gap-free prefix of the
// seqs, so a reader that asks again with the last seq it got never misses an event; fewer than
// limit events means the reader reached the head as it stood when the statement ran. A seq
// dropped by retention is simply absent: compare after with MinRetainedSeq first.
// ErrInvalidLimit for limit < 1; database errors are wrapped.
func (r *Reader) EventsAfter(ctx context.Context, after int64, limit int) ([]domain.StoredEvent, error) {
	if limit < 1 {
		return nil, fmt.Errorf("sync: events after %d: %w (got %d)", after, ErrInvalidLimit, limit)
	}
	rows, err := r.runner.DB(ctx).Query(ctx, eventsAfter, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sync: events after %d: %w", after, err)
	}
	events, err := collectEvents(rows, limit)
	if err != nil {
		return nil, fmt.Errorf("sync: events after %d: %w", after, err)
	}
	return events, nil
}

// MinRetainedSeq returns the lowest seq a reader can still get from the log, the retention
// edge of spec 03: max(min(seq), horizon + 1), where the horizon is the highest seq retention
// ever dropped. The horizon keeps it right when a clock that went backwards left a low seq in
// a newer partition while a higher one was dropped with an older partition.
//
// For an empty log ok is false and seq is horizon + 1 (1 when nothing was ever dropped), only
// a lower bound: spec 03's MinRetainedSeq is then HeadSeq + 1, which the caller takes from the
// event_seq counter (instance.Versions), since after retention the log can be empty while the
// counter is not. Database errors are wrapped.
func (r *Reader) MinRetainedSeq(ctx context.Context) (seq int64, ok bool, err error) {
	var lowest pgtype.Int8
	var horizon int64
	if err := r.runner.DB(ctx).QueryRow(ctx, minRetainedSeq).Scan(&lowest, &horizon); err != nil {
		return 0, false, fmt.Errorf("sync: min retained seq: %w", err)
	}
	seq, ok = retainedEdge(lowest, horizon)
	return seq, ok, nil
}

// QueueMinRetainedSeq queues MinRetainedSeq's read on b for a caller that sends reads of several
// modules in one round trip (catch-up's check, composed by wire): once b's results are closed
// without an error, set has received what MinRetainedSeq would return. The read's error is
// MinRetainedSeq's.
func (r *Reader) QueueMinRetainedSeq(b *pgx.Batch, set func(seq int64, ok bool)) {
	b.Queue(minRetainedSeq).QueryRow(func(row pgx.Row) error {
		var lowest pgtype.Int8
		var horizon int64
		if err := row.Scan(&lowest, &horizon); err != nil {
			return fmt.Errorf("sync: min retained seq: %w", err)
		}
		set(retainedEdge(lowest, horizon))
		return nil
	})
}

// retainedEdge is MinRetainedSeq's answer for the log's lowest seq (NULL for an empty log) and
// the retention horizon.
func retainedEdge(lowest pgtype.Int8, horizon int64) (int64, bool) {
	if !lowest.Valid {
		return horizon + 1, false
	}
	return max(lowest.Int64, horizon+1), true
}

// fromUUID maps SQL NULL to uuid.Nil, the domain's "absent".
func fromUUID(u pgtype.UUID) uuid.UUID {
	if !u.Valid {
		return uuid.Nil
	}
	return u.Bytes
}

// toUUID maps uuid.Nil to SQL NULL.
func toUUID(u uuid.UUID) pgtype.UUID {
	return pgtype.UUID{Bytes: u, Valid: u != uuid.Nil}
}
