package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/instance/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// FlagsUpdated is the durable event type every flag change appends (spec 02): resource the
// instance, received by everyone who may read the instance, payload {"keys": [key]}.
const FlagsUpdated = "flags.updated"

// Flags implements instance.Flags and instance.FlagAdmin.
type Flags struct {
	tx       Transactor
	store    FlagStore
	appender kernel.Appender
}

var (
	_ instance.Flags     = (*Flags)(nil)
	_ instance.FlagAdmin = (*Flags)(nil)
)

// NewFlags returns the flag use cases over store, writing in transactions of tx and appending
// flags.updated through appender.
func NewFlags(tx Transactor, store FlagStore, appender kernel.Appender) *Flags {
	return &Flags{tx: tx, store: store, appender: appender}
}

// Evaluate implements instance.Flags.
func (f *Flags) Evaluate(ctx context.Context, a actor.Actor) ([]instance.EvaluatedFlag, error) {
	rows, err := f.store.FlagsFor(ctx, a.Kind, a.PrincipalID)
	if err != nil {
		return nil, fmt.Errorf("instance: evaluate flags: %w", err)
	}
	out := make([]instance.EvaluatedFlag, len(rows))
	for i, r := range rows {
		out[i] = instance.EvaluatedFlag{Key: r.Key, Enabled: domain.Value(r.DefaultEnabled, r.KindOverride, r.PrincipalOverride)}
	}
	return out, nil
}

// List implements instance.FlagAdmin.
func (f *Flags) List(ctx context.Context) ([]instance.Flag, error) {
	flags, err := f.store.ListFlags(ctx)
	if err != nil {
		return nil, fmt.Errorf("instance: list flags: %w", err)
	}
	return flags, nil
}

// Define implements instance.FlagAdmin.
func (f *Flags) Define(ctx context.Context, key, description string, defaultEnabled bool) (instance.Flag, error) {
	if err := domain.ValidateDefinition(key, description); err != nil {
		return instance.Flag{}, err
	}
	var flag instance.Flag
	err := f.tx.RunInTx(ctx, func(ctx context.Context) error {
		changed, err := f.store.PutFlag(ctx, key, description, defaultEnabled)
		if err != nil {
			return err
		}
		if changed {
			if err := f.appendUpdated(ctx, key); err != nil {
				return err
			}
		}
		flag, err = f.store.GetFlag(ctx, key)
		return err
	})
	if err != nil {
		return instance.Flag{}, fmt.Errorf("instance: define flag %s: %w", key, err)
	}
	return flag, nil
}

// SetOverride implements instance.FlagAdmin.
func (f *Flags) SetOverride(ctx context.Context, key string, target instance.FlagTarget, enabled bool) (instance.Flag, error) {
	return f.changeOverride(ctx, "set override", key, target, func(ctx context.Context) (bool, error) {
		return f.store.PutOverride(ctx, key, target, enabled)
	})
}

// ClearOverride implements instance.FlagAdmin.
func (f *Flags) ClearOverride(ctx context.Context, key string, target instance.FlagTarget) (instance.Flag, error) {
	return f.changeOverride(ctx, "clear override", key, target, func(ctx context.Context) (bool, error) {
		return f.store.DeleteOverride(ctx, key, target)
	})
}

// changeOverride validates key and target, then, in one transaction, locks the flag, runs
// change and, when it changed something, bumps the flag's version and appends flags.updated;
// it returns the flag as it is afterwards.
func (f *Flags) changeOverride(ctx context.Context, what, key string, target instance.FlagTarget,
	change func(ctx context.Context) (bool, error),
) (instance.Flag, error) {
	var fields []problem.FieldError
	if msg := domain.KeyProblem(key); msg != "" {
		fields = append(fields, problem.FieldError{Field: "key", Message: msg})
	}
	if msg := target.Problem(); msg != "" {
		fields = append(fields, problem.FieldError{Field: "target", Message: msg})
	}
	if len(fields) > 0 {
		return instance.Flag{}, problem.Validation(fields...)
	}
	var flag instance.Flag
	err := f.tx.RunInTx(ctx, func(ctx context.Context) error {
		if err := f.store.LockFlag(ctx, key); err != nil {
			return err
		}
		changed, err := change(ctx)
		if err != nil {
			return err
		}
		if changed {
			if err := f.store.TouchFlag(ctx, key); err != nil {
				return err
			}
			if err := f.appendUpdated(ctx, key); err != nil {
				return err
			}
		}
		flag, err = f.store.GetFlag(ctx, key)
		return err
	})
	if err != nil {
		return instance.Flag{}, fmt.Errorf("instance: %s of flag %s for %s: %w", what, key, target, err)
	}
	return flag, nil
}

// Delete implements instance.FlagAdmin.
func (f *Flags) Delete(ctx context.Context, key string) error {
	if err := domain.ValidateKey(key); err != nil {
		return err
	}
	err := f.tx.RunInTx(ctx, func(ctx context.Context) error {
		deleted, err := f.store.DeleteFlag(ctx, key)
		if err != nil {
			return err
		}
		if !deleted {
			return instance.ErrFlagNotFound
		}
		return f.appendUpdated(ctx, key)
	})
	if err != nil {
		return fmt.Errorf("instance: delete flag %s: %w", key, err)
	}
	return nil
}

// appendUpdated appends flags.updated for key in the transaction of ctx. The actor is the one
// in ctx, or the instance itself for an operator at the CLI: the log needs an actor, and an
// event no principal caused is the system's (spec 03, actor), named {id: the instance's id,
// kind: system, display_name: its name} where the event is delivered.
func (f *Flags) appendUpdated(ctx context.Context, key string) error {
	info, err := f.store.Info(ctx)
	if err != nil {
		return err
	}
	actorID := info.ID
	if a, ok := actor.From(ctx); ok && a.PrincipalID != uuid.Nil {
		actorID = a.PrincipalID
	}
	return f.appender.Append(ctx, kernel.Event{
		Type:         FlagsUpdated,
		ActorID:      actorID,
		ResourceKind: kernel.ResourceInstance,
		ResourceID:   info.ID,
		Payload:      flagsUpdatedPayload{Keys: []string{key}},
	})
}

// flagsUpdatedPayload is flags.updated's payload (sync/domain's register: keys, a list).
type flagsUpdatedPayload struct {
	Keys []string `json:"keys"`
}
