// Package postgres implements the instance ports on PostgreSQL: the schema instance with the
// single instance row, the sequence counters and the feature flags. Every statement runs on tx.Runner.DB(ctx), so
// it joins the caller's transaction when there is one; the counters refuse to run anywhere but
// in a transaction's commit phase.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the instance module owns.
const Schema = "instance"

// The counter rows of instance.sequence_counters.
const (
	counterEventSeq          = "event_seq"
	counterPermissionVersion = "permission_version"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the instance module's migration set, which creates the schema, the
// instance table, the counter rows at 0 and the feature flag tables; the composition root
// applies it first.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("instance: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/instance_get.sql
	instanceGet string
	//go:embed queries/instance_insert_if_missing.sql
	instanceInsertIfMissing string
	//go:embed queries/instance_sync_epoch.sql
	instanceSyncEpoch string
	//go:embed queries/counter_value.sql
	counterValue string
	//go:embed queries/counter_event_seq_advance.sql
	counterEventSeqAdvance string
	//go:embed queries/counter_permission_version_advance.sql
	counterPermissionVersionAdvance string
)

// Store implements instance.Versions, instance.Counters, instance.Setup and the flag use
// cases' app.FlagStore (flags.go).
type Store struct {
	runner *tx.Runner
}

var (
	_ instance.Versions = (*Store)(nil)
	_ instance.Counters = (*Store)(nil)
	_ instance.Setup    = (*Store)(nil)
)

// New returns a Store whose statements run on runner's transaction of the context, or on its
// pool outside one.
func New(runner *tx.Runner) *Store {
	return &Store{runner: runner}
}

// Ensure implements instance.Setup.
func (s *Store) Ensure(ctx context.Context, name string) (instance.Info, error) {
	if strings.TrimSpace(name) == "" {
		return instance.Info{}, fmt.Errorf("instance: ensure: %w", instance.ErrInvalidName)
	}
	// The INSERT and the read are two statements on purpose: in READ COMMITTED the second one
	// takes a new snapshot and so sees the row of a concurrent Ensure that won the race, which
	// the INSERT's own snapshot would not.
	if _, err := s.runner.DB(ctx).Exec(ctx, instanceInsertIfMissing, ids.New(), name, ids.New()); err != nil {
		return instance.Info{}, fmt.Errorf("instance: ensure: insert: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return instance.Info{}, fmt.Errorf("instance: ensure: %w", err)
	}
	return info, nil
}

// Info returns the instance; ErrNoInstance before Ensure ran.
func (s *Store) Info(ctx context.Context) (instance.Info, error) {
	var info instance.Info
	err := s.runner.DB(ctx).QueryRow(ctx, instanceGet).
		Scan(&info.ID, &info.Name, &info.SyncEpoch, &info.CreatedAt, &info.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.Info{}, instance.ErrNoInstance
	}
	if err != nil {
		return instance.Info{}, fmt.Errorf("instance: read instance: %w", err)
	}
	info.CreatedAt = info.CreatedAt.UTC()
	return info, nil
}

// EventSeq implements instance.Versions.
func (s *Store) EventSeq(ctx context.Context) (int64, error) {
	return s.counter(ctx, counterEventSeq)
}

// PermissionVersion implements instance.Versions.
func (s *Store) PermissionVersion(ctx context.Context) (int64, error) {
	return s.counter(ctx, counterPermissionVersion)
}

func (s *Store) counter(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.runner.DB(ctx).QueryRow(ctx, counterValue, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("instance: read %s: %w", name, instance.ErrCounterMissing)
	}
	if err != nil {
		return 0, fmt.Errorf("instance: read %s: %w", name, err)
	}
	return v, nil
}

// SyncEpoch implements instance.Versions.
func (s *Store) SyncEpoch(ctx context.Context) (uuid.UUID, error) {
	var epoch uuid.UUID
	err := s.runner.DB(ctx).QueryRow(ctx, instanceSyncEpoch).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, instance.ErrNoInstance
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("instance: read sync epoch: %w", err)
	}
	return epoch, nil
}

// QueueEventSeq queues EventSeq's read on b for a caller that sends reads of several modules
// in one round trip (catch-up's check, composed by wire): once b's results are closed without
// an error, set has received the value EventSeq would return. The read's error is EventSeq's.
func (s *Store) QueueEventSeq(b *pgx.Batch, set func(int64)) {
	b.Queue(counterValue, counterEventSeq).QueryRow(func(row pgx.Row) error {
		var v int64
		err := row.Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("instance: read %s: %w", counterEventSeq, instance.ErrCounterMissing)
		}
		if err != nil {
			return fmt.Errorf("instance: read %s: %w", counterEventSeq, err)
		}
		set(v)
		return nil
	})
}

// QueuePermissionVersion queues PermissionVersion's read on b, like QueueEventSeq: once b's
// results are closed without an error, set has received the value. The read's error is
// PermissionVersion's.
func (s *Store) QueuePermissionVersion(b *pgx.Batch, set func(int64)) {
	b.Queue(counterValue, counterPermissionVersion).QueryRow(func(row pgx.Row) error {
		var v int64
		err := row.Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("instance: read %s: %w", counterPermissionVersion, instance.ErrCounterMissing)
		}
		if err != nil {
			return fmt.Errorf("instance: read %s: %w", counterPermissionVersion, err)
		}
		set(v)
		return nil
	})
}

// QueueSyncEpoch queues SyncEpoch's read on b, like QueueEventSeq: once b's results are closed
// without an error, set has received the epoch. The read's error is SyncEpoch's.
func (s *Store) QueueSyncEpoch(b *pgx.Batch, set func(uuid.UUID)) {
	b.Queue(instanceSyncEpoch).QueryRow(func(row pgx.Row) error {
		var epoch uuid.UUID
		err := row.Scan(&epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			return instance.ErrNoInstance
		}
		if err != nil {
			return fmt.Errorf("instance: read sync epoch: %w", err)
		}
		set(epoch)
		return nil
	})
}

// QueueAdvanceEventSeq implements instance.Counters.
func (s *Store) QueueAdvanceEventSeq(ctx context.Context, n int) error {
	if err := checkAdvance(ctx, n); err != nil {
		return fmt.Errorf("instance: queue event_seq advance: %w", err)
	}
	if err := tx.QueueFinal(ctx, counterEventSeqAdvance, int64(n)); err != nil {
		return fmt.Errorf("instance: queue event_seq advance: %w", err)
	}
	return nil
}

// AdvanceEventSeq implements instance.Counters.
func (s *Store) AdvanceEventSeq(ctx context.Context, n int) (int64, error) {
	if err := checkAdvance(ctx, n); err != nil {
		return 0, fmt.Errorf("instance: advance event_seq: %w", err)
	}
	var last int64
	if err := scanAdvance(s.runner.DB(ctx).QueryRow(ctx, counterEventSeqAdvance, int64(n)), &last); err != nil {
		return 0, fmt.Errorf("instance: advance event_seq: %w", err)
	}
	return last, nil
}

// AdvancePermissionVersion implements instance.Counters.
func (s *Store) AdvancePermissionVersion(ctx context.Context) (int64, error) {
	if err := tx.RequireCommitPhase(ctx); err != nil {
		return 0, fmt.Errorf("instance: advance permission_version: %w", err)
	}
	var (
		eventSeqTaken bool
		value         *int64
	)
	err := s.runner.DB(ctx).QueryRow(ctx, counterPermissionVersionAdvance).Scan(&eventSeqTaken, &value)
	switch {
	case err != nil:
		return 0, fmt.Errorf("instance: advance permission_version: %w", err)
	case eventSeqTaken:
		return 0, fmt.Errorf("instance: advance permission_version: %w", instance.ErrLockOrder)
	case value == nil:
		return 0, fmt.Errorf("instance: advance permission_version: %w", instance.ErrCounterMissing)
	}
	return *value, nil
}

// checkAdvance refuses an event_seq advance outside the commit phase or by fewer than one.
func checkAdvance(ctx context.Context, n int) error {
	if err := tx.RequireCommitPhase(ctx); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("%w: got %d", instance.ErrInvalidCount, n)
	}
	return nil
}

// scanAdvance reads the event_seq advance's one row; no row means the counter row is gone.
func scanAdvance(row pgx.Row, last *int64) error {
	err := row.Scan(last)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.ErrCounterMissing
	}
	return err
}
