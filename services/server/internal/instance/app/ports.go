// Package app holds the instance module's use cases: evaluating feature flags for an actor and
// administering them (define, override, delete), each change with its flags.updated event in
// the same transaction.
package app

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/actor"
)

// Transactor runs fn in one transaction carried by the context fn receives, joining the
// caller's transaction when ctx already carries one. *tx.Runner implements it.
type Transactor interface {
	// RunInTx runs fn and its commit-phase hooks and commits; any error rolls everything back.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// FlagForActor is one flag with the overrides that apply to one actor, as Evaluate needs it.
type FlagForActor struct {
	// Key names the flag.
	Key string
	// DefaultEnabled is the flag's default.
	DefaultEnabled bool
	// KindOverride is the override for the actor's principal kind; nil when there is none.
	KindOverride *bool
	// PrincipalOverride is the override for the actor's principal; nil when there is none.
	PrincipalOverride *bool
}

// FlagStore is what the flag use cases need from storage. Every method runs on the transaction
// of ctx when there is one (adapters use tx.Runner.DB). The postgres adapter's Store
// implements it.
type FlagStore interface {
	// Info returns the instance (its id is the resource of flags.updated);
	// instance.ErrNoInstance before Setup.Ensure ran.
	Info(ctx context.Context) (instance.Info, error)
	// FlagsFor returns every flag, ordered by key, with the overrides for kind and for
	// principalID (uuid.Nil matches no principal override).
	FlagsFor(ctx context.Context, kind actor.Kind, principalID uuid.UUID) ([]FlagForActor, error)
	// ListFlags returns every flag with its overrides, ordered by key.
	ListFlags(ctx context.Context) ([]instance.Flag, error)
	// GetFlag returns one flag with its overrides; instance.ErrFlagNotFound when there is none.
	GetFlag(ctx context.Context, key string) (instance.Flag, error)
	// LockFlag locks the flag's row until the transaction ends, so that overrides change only
	// while the flag exists; instance.ErrFlagNotFound when there is none.
	LockFlag(ctx context.Context, key string) error
	// PutFlag creates the flag, or changes its description and default; changed is false when
	// the flag existed with exactly these values (then nothing is written).
	PutFlag(ctx context.Context, key, description string, defaultEnabled bool) (changed bool, err error)
	// DeleteFlag removes the flag and its overrides; deleted is false when there was none.
	DeleteFlag(ctx context.Context, key string) (deleted bool, err error)
	// PutOverride sets the override of the flag for target; changed is false when it already
	// had this value.
	PutOverride(ctx context.Context, key string, target instance.FlagTarget, enabled bool) (changed bool, err error)
	// DeleteOverride removes the override of the flag for target; deleted is false when there
	// was none.
	DeleteOverride(ctx context.Context, key string, target instance.FlagTarget) (deleted bool, err error)
	// TouchFlag records a change of the flag's overrides: version + 1, updated_at now.
	TouchFlag(ctx context.Context, key string) error
}
