// Package instance offers what the whole installation has exactly once: the instance row with
// its sync epoch, and the commit-ordered counters event_seq and permission_version on which the
// event log's gap-free order and the permission caches rest (spec 02, the counter-row pattern).
package instance

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// EventSeqSetting is the transaction-local PostgreSQL setting through which the event_seq
// advance publishes the counter's new value (the last seq it handed out) to the statements
// queued after it in the same batch: they read it with
// current_setting('bothy.event_seq')::bigint, without naming instance's schema and without a
// second round trip. It is set with set_config(..., true), so it ends with the transaction.
const EventSeqSetting = "bothy.event_seq"

// ErrNoInstance is returned when the instance row does not exist yet: the database is migrated
// but Setup.Ensure has not run.
var ErrNoInstance = errors.New("instance: no instance row (run bothy migrate)")

// ErrCounterMissing is returned when a counter row is gone: the database was damaged by hand,
// since the migration creates both rows and nothing deletes them.
var ErrCounterMissing = errors.New("instance: sequence counter row missing")

// ErrInvalidCount is returned by the event_seq advances for a count below 1: advancing by zero
// would take the lock for nothing, and a negative count would hand out seqs twice.
var ErrInvalidCount = errors.New("instance: advance count must be at least 1")

// ErrLockOrder is returned by AdvancePermissionVersion in a transaction that already advanced
// event_seq. Every transaction takes permission_version before event_seq; taking them the
// other way round could deadlock against a transaction that follows the rule.
var ErrLockOrder = errors.New("instance: permission_version must be advanced before event_seq")

// ErrInvalidName is returned by Setup.Ensure for an empty instance name.
var ErrInvalidName = errors.New("instance: name must not be empty")

// Info describes the instance, as getInstance and the snapshot report it.
type Info struct {
	// ID identifies the instance; it never changes.
	ID uuid.UUID
	// Name is the display name operators chose (configuration key instance.name at creation).
	Name string
	// SyncEpoch changes only when the database is restored from a backup; every cursor issued
	// under another epoch is then invalid.
	SyncEpoch uuid.UUID
	// CreatedAt is when the instance row was created, in UTC.
	CreatedAt time.Time
	// Version increases on every change of the row, so clients can tell a newer Info.
	Version int64
}

// Versions reads the instance's counters and epoch without locking, so that catch-up, the
// snapshot and the permission cache can check them on every request cheaply. Each read is a
// plain READ COMMITTED read: a reader that sees EventSeq = H sees every event with seq <= H.
type Versions interface {
	// EventSeq returns the head of the event log: the last seq handed out by a committed
	// transaction (0 before the first event). ErrCounterMissing if its row is gone.
	EventSeq(ctx context.Context) (int64, error)
	// PermissionVersion returns the current permission version; a cached permission scope is
	// valid exactly while its version equals this. ErrCounterMissing if its row is gone.
	PermissionVersion(ctx context.Context) (int64, error)
	// SyncEpoch returns the instance's sync epoch; ErrNoInstance before Setup.Ensure ran.
	SyncEpoch(ctx context.Context) (uuid.UUID, error)
}

// Counters advances the commit-ordered counters. Each advance locks the counter's row until
// COMMIT, so transactions receive their values in commit order; that is why every method
// refuses to run outside the transaction runner's commit phase (tx.ErrNoTransaction outside a
// transaction, tx.ErrNotInCommitPhase inside one but outside its commit-phase hooks): nobody
// may hold the lock across application work. Lock order: permission_version before event_seq.
type Counters interface {
	// QueueAdvanceEventSeq queues into b the UPDATE that advances event_seq by n; the statement
	// RETURNs the new value and publishes it as the transaction-local setting EventSeqSetting
	// (`bothy.event_seq`, via set_config(..., true)), so that statements queued after it in the
	// same batch (the event INSERT, the NOTIFY) read it with current_setting() without naming
	// instance's schema and without a second round trip. The queued statement yields one row
	// with one bigint, the new value (the last seq of the n); read it in queue order with
	// BatchResults.QueryRow, or let BatchResults.Close check that the row exists
	// (ErrCounterMissing otherwise). b must be sent on the transaction of ctx
	// (tx.Runner.DB(ctx)). Refuses outside the commit phase; ErrInvalidCount for n < 1.
	QueueAdvanceEventSeq(ctx context.Context, b *pgx.Batch, n int) error
	// AdvanceEventSeq advances event_seq by n in its own round trip and returns the new value
	// (the last seq of the n; the first is last-n+1). It publishes EventSeqSetting like
	// QueueAdvanceEventSeq. Refuses outside the commit phase; ErrInvalidCount for n < 1.
	AdvanceEventSeq(ctx context.Context, n int) (last int64, err error)
	// AdvancePermissionVersion advances permission_version by one and returns the new value;
	// every grant change calls it. Refuses outside the commit phase, and with ErrLockOrder
	// after event_seq was advanced in the same transaction.
	AdvancePermissionVersion(ctx context.Context) (int64, error)
}

// Setup creates the instance when the database is new.
type Setup interface {
	// Ensure creates the single instance row, with a fresh UUIDv7 id and sync_epoch and the
	// given name, when it is missing, and returns the instance. An existing instance is
	// returned unchanged (name is only its initial name). Concurrent calls create one row.
	// ErrInvalidName for an empty name. The composition root runs it after the migrations.
	Ensure(ctx context.Context, name string) (Info, error)
}
