package app

import (
	"context"
	"fmt"
	"time"

	"bothy.example.com/server/internal/instance"
)

// EpochStore is what the epoch use case needs from storage; the postgres adapter's Store
// implements it.
type EpochStore interface {
	// Info returns the instance; instance.ErrNoInstance before Setup.Ensure ran.
	Info(ctx context.Context) (instance.Info, error)
	// RotateEpoch gives the instance a fresh sync epoch and records the rotation
	// (instance.Restores).
	RotateEpoch(ctx context.Context, in instance.RestoreInput) (instance.Restore, error)
	// Record records the cluster's identity (instance.ClusterIdentity); ok is false when the
	// role may not read it.
	Record(ctx context.Context, at time.Time) (ok bool, err error)
}

// Epoch implements instance.Epoch: the instance's side of a restore.
type Epoch struct {
	store EpochStore
}

var _ instance.Epoch = (*Epoch)(nil)

// NewEpoch returns the epoch use case over store.
func NewEpoch(store EpochStore) *Epoch {
	return &Epoch{store: store}
}

// Info implements instance.Epoch.
func (e *Epoch) Info(ctx context.Context) (instance.Info, error) {
	info, err := e.store.Info(ctx)
	if err != nil {
		return instance.Info{}, fmt.Errorf("instance: read the instance: %w", err)
	}
	return info, nil
}

// RotateAfterRestore implements instance.Epoch. The two steps are two statements, not one
// transaction: reading the cluster's identity fails for a role without the right to
// pg_control_system, which would abort a transaction holding the rotation; Record reports that
// as ok false instead, and the rotation stands.
func (e *Epoch) RotateAfterRestore(ctx context.Context, in instance.RestoreInput) (instance.Restore, error) {
	r, err := e.store.RotateEpoch(ctx, in)
	if err != nil {
		return instance.Restore{}, fmt.Errorf("instance: rotate the sync epoch after a restore: %w", err)
	}
	if _, err := e.store.Record(ctx, in.At); err != nil {
		return instance.Restore{}, fmt.Errorf("instance: rotated the sync epoch to %s, then: %w", r.NewEpoch, err)
	}
	return r, nil
}
