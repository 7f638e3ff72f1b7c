// Package instance offers what the whole installation has exactly once: the instance row with
// its sync epoch, the commit-ordered counters event_seq and permission_version on which the
// event log's gap-free order and the permission caches rest (spec 02, the counter-row pattern),
// and the feature flags with their overrides per principal kind and per principal.
package instance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
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
	// QueueAdvanceEventSeq queues the UPDATE that advances event_seq by n among the statements
	// the transaction runner sends together with COMMIT (tx.QueueFinal), so the counter's row
	// lock is held for no network round trip: it is for a last commit-phase hook (the event
	// appender's). The statement publishes the new value (the last seq of the n) as the
	// transaction-local setting EventSeqSetting (`bothy.event_seq`, via set_config(..., true)),
	// so that the statements queued after it (the event INSERT, the NOTIFY) read it with
	// current_setting() without naming instance's schema. Nothing comes back: when the counter
	// row is missing the setting stays unset and the first statement reading it fails in the
	// server, so the transaction does not commit. Refuses outside a last commit-phase hook
	// (tx.ErrNoTransaction, tx.ErrNotInCommitPhase); ErrInvalidCount for n < 1.
	QueueAdvanceEventSeq(ctx context.Context, n int) error
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

// ErrFlagNotFound is returned by the flag administration for a key no flag has. It is a
// problem.ErrNotFound, so an HTTP edge or the CLI reports it as not_found.
var ErrFlagNotFound = fmt.Errorf("instance: feature flag not found: %w", problem.ErrNotFound)

// EvaluatedFlag is one feature flag with its value for one actor, as getSnapshot's features
// list it (spec 05 EvaluatedFlag).
type EvaluatedFlag struct {
	// Key names the flag, e.g. "threads.summaries".
	Key string
	// Enabled is the flag's value for the actor: its principal override, else its principal
	// kind's override, else the flag's default.
	Enabled bool
}

// Flags evaluates feature flags for whoever asks, so that clients and modules switch
// behaviour per principal without a deployment.
type Flags interface {
	// Evaluate returns every defined flag, ordered by key, with its value for a: an override
	// for a.PrincipalID wins over an override for a.Kind, which wins over the flag's default.
	// It authorizes nothing (the caller did: getSnapshot checks sync.snapshot.read) and is a
	// single read on the caller's transaction when there is one. An empty list when no flag is
	// defined.
	Evaluate(ctx context.Context, a actor.Actor) ([]EvaluatedFlag, error)
}

// FlagTarget is whom a flag override applies to: every principal of one kind, or one
// principal. Exactly one of Kind and PrincipalID is set; build it with KindTarget,
// PrincipalTarget or ParseFlagTarget.
type FlagTarget struct {
	// Kind is the principal kind the override applies to (person, agent or app); empty for a
	// principal override.
	Kind actor.Kind
	// PrincipalID is the one principal the override applies to; uuid.Nil for a kind override.
	PrincipalID uuid.UUID
}

// KindTarget returns the target "every principal of kind k".
func KindTarget(k actor.Kind) FlagTarget { return FlagTarget{Kind: k} }

// PrincipalTarget returns the target "the principal id".
func PrincipalTarget(id uuid.UUID) FlagTarget { return FlagTarget{PrincipalID: id} }

// flagTargetKinds are the principal kinds an override may target.
var flagTargetKinds = []actor.Kind{actor.KindPerson, actor.KindAgent, actor.KindApp}

// ParseFlagTarget reads a target as the CLI spells it: "kind:person", "kind:agent",
// "kind:app" or "principal:<uuid>". It fails (a problem.ErrValidation naming the field
// target) for anything else.
func ParseFlagTarget(s string) (FlagTarget, error) {
	prefix, value, ok := strings.Cut(s, ":")
	switch {
	case ok && prefix == "kind":
		t := KindTarget(actor.Kind(value))
		if err := t.Validate(); err != nil {
			return FlagTarget{}, err
		}
		return t, nil
	case ok && prefix == "principal":
		id, err := uuid.Parse(value)
		if err != nil || id == uuid.Nil || id.String() != value {
			return FlagTarget{}, invalidTarget()
		}
		return PrincipalTarget(id), nil
	}
	return FlagTarget{}, invalidTarget()
}

// Validate reports whether t names exactly one valid target: a kind among person, agent and
// app, or a principal id other than uuid.Nil. The error is a problem.ErrValidation naming the
// field target.
func (t FlagTarget) Validate() error {
	if msg := t.Problem(); msg != "" {
		return problem.Validation(problem.FieldError{Field: "target", Message: msg})
	}
	return nil
}

// Problem returns what is wrong with t, or "" when it is valid (see Validate), for callers
// that collect the problems of several fields into one validation error.
func (t FlagTarget) Problem() string {
	switch {
	case t.PrincipalID != uuid.Nil && t.Kind == "":
		return ""
	case t.PrincipalID == uuid.Nil && slices.Contains(flagTargetKinds, t.Kind):
		return ""
	}
	return targetSyntax
}

// String spells t as ParseFlagTarget reads it.
func (t FlagTarget) String() string {
	if t.PrincipalID != uuid.Nil {
		return "principal:" + t.PrincipalID.String()
	}
	return "kind:" + string(t.Kind)
}

// targetSyntax is the message of an invalid target.
const targetSyntax = "must be kind:person, kind:agent, kind:app or principal:<uuid>"

func invalidTarget() error {
	return problem.Validation(problem.FieldError{Field: "target", Message: targetSyntax})
}

// FlagOverride sets a flag's value for one target.
type FlagOverride struct {
	// Target is whom it applies to.
	Target FlagTarget
	// Enabled is the flag's value for the target.
	Enabled bool
}

// Flag is one feature flag as operators administer it.
type Flag struct {
	// Key names the flag: 1 to 64 characters of a-z, 0-9, '.', '_' and '-', starting with a
	// letter.
	Key string
	// Description says what the flag switches, for operators (at most 500 characters).
	Description string
	// DefaultEnabled is the value for every actor no override targets.
	DefaultEnabled bool
	// Overrides are the flag's overrides, kind overrides first (person, agent, app), then
	// principal overrides by principal id; an empty list, never nil, when there are none.
	Overrides []FlagOverride
	// Version starts at 1 and increases with every change of the flag or its overrides.
	Version int64
	// CreatedAt and UpdatedAt are when the flag was defined and last changed, in UTC.
	CreatedAt, UpdatedAt time.Time
}

// FlagAdmin changes feature flags. Operators use it through `bothy admin flags`; it
// authorizes nothing itself (whoever runs the CLI has the database), so an HTTP operation
// built on it must authorize instance.admin first. Every call that changes something runs in
// one transaction (joining the caller's, if any) and appends one flags.updated event naming the
// changed key; a call that changes nothing appends nothing. The event's actor is the actor in
// ctx, or the instance id when there is none (an operator at the CLI). Invalid input is a
// problem.ErrValidation naming the field (key, description, target).
type FlagAdmin interface {
	// Define creates the flag key, or changes the description and default of an existing
	// one, and returns it.
	Define(ctx context.Context, key, description string, defaultEnabled bool) (Flag, error)
	// SetOverride sets the flag's value for target and returns the flag. ErrFlagNotFound when
	// key is not defined.
	SetOverride(ctx context.Context, key string, target FlagTarget, enabled bool) (Flag, error)
	// ClearOverride removes the flag's override for target (nothing to remove is not an
	// error) and returns the flag. ErrFlagNotFound when key is not defined.
	ClearOverride(ctx context.Context, key string, target FlagTarget) (Flag, error)
	// Delete removes the flag with its overrides; Evaluate no longer lists it.
	// ErrFlagNotFound when key is not defined.
	Delete(ctx context.Context, key string) error
	// List returns every flag with its overrides, ordered by key.
	List(ctx context.Context) ([]Flag, error)
}

// RestoreHow says what rotated the sync epoch.
type RestoreHow string

// The ways the sync epoch rotates (spec 06, ADR 0021).
const (
	// RestoreByCommand: bothy admin restore restored a backup.
	RestoreByCommand RestoreHow = "restore"
	// RestoreDetected: a process found at its start that the database was set back behind
	// bothy's back (a pg_restore by hand, a point-in-time recovery).
	RestoreDetected RestoreHow = "detected"
)

// ErrInvalidRestore is returned by Restores.RotateEpoch for a rotation without a way, a source
// or a time.
var ErrInvalidRestore = errors.New("instance: a rotation needs its way, its source and its time")

// RestoreInput describes a rotation of the sync epoch.
type RestoreInput struct {
	// At is when the restore happened (the application clock).
	At time.Time
	// How is what rotated the epoch.
	How RestoreHow
	// Source is the backup file restored, or what the start-up check saw (at most 4096 bytes).
	Source string
	// BackupTakenAt is when the backup was taken; zero when unknown.
	BackupTakenAt time.Time
}

// Restore is one rotation of the sync epoch, as instance.restores records it.
type Restore struct {
	// ID identifies the record (UUIDv7).
	ID uuid.UUID
	// RestoredAt is when the restore happened, in UTC.
	RestoredAt time.Time
	// How is what rotated the epoch.
	How RestoreHow
	// Source is the backup file restored, or what the start-up check saw.
	Source string
	// BackupTakenAt is when the backup was taken, in UTC; zero when unknown.
	BackupTakenAt time.Time
	// HeadSeq is the head of the log (the event_seq counter) as the restore left it.
	HeadSeq int64
	// OldEpoch is the epoch the restored database carried; NewEpoch replaced it.
	OldEpoch, NewEpoch uuid.UUID
}

// Restores rotates the sync epoch after the database was set back, so that every cursor issued
// before (whose seqs may now name other events, or none) gets epoch_changed and its client
// resyncs from a snapshot (spec 03, ADR 0015), and keeps the record of each rotation.
type Restores interface {
	// RotateEpoch gives the instance a fresh UUIDv7 sync_epoch, raises its version and records
	// the rotation with the head of the log, in one statement (joining the caller's
	// transaction, if any). ErrNoInstance without an instance row; ErrInvalidRestore for an
	// input without its way, source or time.
	RotateEpoch(ctx context.Context, in RestoreInput) (Restore, error)
	// ListRestores returns every rotation, oldest first; an empty list when there was none.
	ListRestores(ctx context.Context) ([]Restore, error)
}

// ClusterIdentity detects a database set back behind bothy's back: it compares the identity of
// the PostgreSQL cluster the database runs on (system identifier and timeline) with the one
// recorded inside the database (ADR 0021). A database restored into another cluster carries the
// old cluster's identity, and a point-in-time recovery or a promoted replica runs on a new
// timeline; a pg_restore by hand into the same cluster is not detected.
type ClusterIdentity interface {
	// Reconcile records the cluster's identity when the database has none yet, does nothing
	// when it matches, and otherwise rotates the sync epoch (RestoreDetected, the source naming
	// both identities) and records the new identity, in one transaction, so that processes
	// starting together rotate once. rotated reports whether it rotated. A role without the
	// right to read the cluster's control data (pg_control_system) leaves everything as it is:
	// ok is false.
	Reconcile(ctx context.Context, at time.Time) (r Restore, rotated, ok bool, err error)
	// Record records the cluster's identity without rotating (after bothy admin restore
	// rotated); ok is false when the role may not read it.
	Record(ctx context.Context, at time.Time) (ok bool, err error)
}

// Epoch is what a backup and a restore need of the instance (ADR 0021, ADR 0035): which
// instance a database holds, and the rotation of its sync epoch once a backup was restored into
// it. The backup package uses it; the app package's Epoch implements it.
type Epoch interface {
	// Info returns the instance; ErrNoInstance before Setup.Ensure ran.
	Info(ctx context.Context) (Info, error)
	// RotateAfterRestore rotates the sync epoch (Restores.RotateEpoch, recorded in restores)
	// and then records the identity of the cluster the database runs on
	// (ClusterIdentity.Record), so that bothy serve's start-up check does not take the
	// restored database for one set back behind bothy's back and rotate again. ErrNoInstance
	// without an instance row; ErrInvalidRestore for an input without its way, source or time.
	RotateAfterRestore(ctx context.Context, in RestoreInput) (Restore, error)
}
