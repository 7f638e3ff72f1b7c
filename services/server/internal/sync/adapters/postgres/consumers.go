package postgres

import (
	"context"
	_ "embed" // the SQL of queries/
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

var (
	//go:embed queries/consumer_lock_principal.sql
	consumerLockPrincipal string
	//go:embed queries/consumer_count_of_principal.sql
	consumerCountOfPrincipal string
	//go:embed queries/consumer_insert.sql
	consumerInsert string
	//go:embed queries/consumer_get.sql
	consumerGet string
	//go:embed queries/consumers_of_principal.sql
	consumersOfPrincipal string
	//go:embed queries/consumer_delete.sql
	consumerDelete string
	//go:embed queries/consumer_advance.sql
	consumerAdvance string
	//go:embed queries/consumer_advance_in_epoch.sql
	consumerAdvanceInEpoch string
	//go:embed queries/commit_without_flush.sql
	commitWithoutFlush string
)

// ConsumerStore implements app.ConsumerStore on sync.consumers. Create runs in a transaction
// of its own (or the caller's) holding a per-principal advisory lock, so the cap holds under
// concurrent creates; the ack is one UPDATE with GREATEST, so concurrent acks never move a
// consumer back.
type ConsumerStore struct {
	runner *tx.Runner
}

var _ app.ConsumerStore = (*ConsumerStore)(nil)

// NewConsumerStore returns a ConsumerStore on runner.
func NewConsumerStore(runner *tx.Runner) *ConsumerStore {
	return &ConsumerStore{runner: runner}
}

// Create implements app.ConsumerStore.
func (s *ConsumerStore) Create(ctx context.Context, c syncmod.Consumer, maxPerPrincipal int) (syncmod.Consumer, bool, error) {
	var out syncmod.Consumer
	created := false
	err := s.runner.RunInTx(ctx, func(ctx context.Context) error {
		db := s.runner.DB(ctx)
		if _, err := db.Exec(ctx, consumerLockPrincipal, c.PrincipalID); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		got, ok, err := s.Get(ctx, c.PrincipalID, c.Name)
		if err != nil {
			return err
		}
		if ok {
			out = got
			return nil
		}
		var n int64
		if err := db.QueryRow(ctx, consumerCountOfPrincipal, c.PrincipalID).Scan(&n); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if n >= int64(maxPerPrincipal) {
			return app.ErrConsumerLimit
		}
		out, err = scanConsumer(db.QueryRow(ctx, consumerInsert, c.PrincipalID, c.Name, c.AckedSeq, c.SyncEpoch, c.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		created = true
		return nil
	})
	if err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: create consumer: %w", err)
	}
	return out, created, nil
}

// Get implements app.ConsumerStore.
func (s *ConsumerStore) Get(ctx context.Context, principalID uuid.UUID, name string) (syncmod.Consumer, bool, error) {
	c, err := scanConsumer(s.runner.DB(ctx).QueryRow(ctx, consumerGet, principalID, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Consumer{}, false, nil
	}
	if err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: consumer: %w", err)
	}
	return c, true, nil
}

// QueueGet queues Get's read on b for a caller that sends it with reads of other adapters in
// one round trip (wire's consumerPageState): once b's results are closed without an error,
// set has received the row, or ok false when the principal has no consumer name.
func (s *ConsumerStore) QueueGet(b *pgx.Batch, principalID uuid.UUID, name string, set func(c syncmod.Consumer, ok bool)) {
	b.Queue(consumerGet, principalID, name).QueryRow(func(row pgx.Row) error {
		c, err := scanConsumer(row)
		if errors.Is(err, pgx.ErrNoRows) {
			set(syncmod.Consumer{}, false)
			return nil
		}
		if err != nil {
			return fmt.Errorf("sync: consumer: %w", err)
		}
		set(c, true)
		return nil
	})
}

// List implements app.ConsumerStore.
func (s *ConsumerStore) List(ctx context.Context, principalID uuid.UUID) ([]syncmod.Consumer, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, consumersOfPrincipal, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: consumers: %w", err)
	}
	out := []syncmod.Consumer{}
	for rows.Next() {
		c, err := scanConsumer(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("sync: consumers: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync: consumers: %w", err)
	}
	return out, nil
}

// Delete implements app.ConsumerStore.
func (s *ConsumerStore) Delete(ctx context.Context, principalID uuid.UUID, name string) error {
	if _, err := s.runner.DB(ctx).Exec(ctx, consumerDelete, principalID, name); err != nil {
		return fmt.Errorf("sync: delete consumer: %w", err)
	}
	return nil
}

// Advance implements app.ConsumerStore.
func (s *ConsumerStore) Advance(ctx context.Context, principalID uuid.UUID, name string, seq int64, at time.Time) (syncmod.Consumer, bool, error) {
	c, err := scanConsumer(s.runner.DB(ctx).QueryRow(ctx, consumerAdvance, principalID, name, seq, at))
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Consumer{}, false, nil
	}
	if err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: advance consumer: %w", err)
	}
	return c, true, nil
}

// AdvanceInEpoch implements app.ConsumerStore. Outside a transaction the update commits
// without waiting for the WAL flush (queries/commit_without_flush.sql, in the same batch and
// round trip): an ack is bookkeeping of at least once delivery, and a crash that forgets the
// newest acks only delivers their events again, while a flush per ack cost an agent reading
// its consumer more than its pages did. Inside a transaction it is a plain update: the
// caller's commit decides.
func (s *ConsumerStore) AdvanceInEpoch(ctx context.Context, principalID uuid.UUID, name string, seq int64, epoch uuid.UUID, at time.Time) (syncmod.Consumer, bool, error) {
	db := s.runner.DB(ctx)
	var c syncmod.Consumer
	var err error
	if inTransaction(ctx) {
		c, err = scanConsumer(db.QueryRow(ctx, consumerAdvanceInEpoch, principalID, name, seq, at, epoch))
	} else {
		c, err = advanceWithoutFlush(ctx, db, principalID, name, seq, epoch, at)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Consumer{}, false, nil
	}
	if err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: advance consumer in epoch: %w", err)
	}
	return c, true, nil
}

// advanceWithoutFlush sends commit_without_flush.sql and consumer_advance_in_epoch.sql in one
// batch: one implicit transaction, committed at the batch's end without a WAL flush.
func advanceWithoutFlush(ctx context.Context, db tx.DB, principalID uuid.UUID, name string, seq int64, epoch uuid.UUID, at time.Time) (c syncmod.Consumer, err error) {
	var b pgx.Batch
	b.Queue(commitWithoutFlush)
	b.Queue(consumerAdvanceInEpoch, principalID, name, seq, at, epoch)
	res := db.SendBatch(ctx, &b)
	defer func() {
		if cerr := res.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if _, err := res.Exec(); err != nil {
		return syncmod.Consumer{}, err
	}
	return scanConsumer(res.QueryRow())
}

// txProbe keys the value inTransaction stores in a transaction.
type txProbe struct{}

// inTransaction reports whether ctx carries an open transaction (tx.Value fails outside one).
func inTransaction(ctx context.Context) bool {
	_, err := tx.Value(ctx, txProbe{}, func() any { return struct{}{} })
	return err == nil
}

// scanConsumer reads one row of the consumer queries, in their column order.
func scanConsumer(row pgx.Row) (syncmod.Consumer, error) {
	var c syncmod.Consumer
	if err := row.Scan(&c.PrincipalID, &c.Name, &c.AckedSeq, &c.SyncEpoch, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return syncmod.Consumer{}, err //nolint:wrapcheck // the callers wrap
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}
