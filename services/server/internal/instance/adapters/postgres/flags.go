package postgres

import (
	"context"
	_ "embed" // the SQL of queries/
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/actor"
)

var (
	//go:embed queries/flag_evaluate.sql
	flagEvaluate string
	//go:embed queries/flag_list.sql
	flagList string
	//go:embed queries/flag_get.sql
	flagGet string
	//go:embed queries/flag_lock.sql
	flagLock string
	//go:embed queries/flag_put.sql
	flagPut string
	//go:embed queries/flag_delete.sql
	flagDelete string
	//go:embed queries/flag_touch.sql
	flagTouch string
	//go:embed queries/flag_override_list.sql
	flagOverrideList string
	//go:embed queries/flag_override_kind_put.sql
	flagOverrideKindPut string
	//go:embed queries/flag_override_principal_put.sql
	flagOverridePrincipalPut string
	//go:embed queries/flag_override_kind_delete.sql
	flagOverrideKindDelete string
	//go:embed queries/flag_override_principal_delete.sql
	flagOverridePrincipalDelete string
)

var _ app.FlagStore = (*Store)(nil)

// FlagsFor implements app.FlagStore.
func (s *Store) FlagsFor(ctx context.Context, kind actor.Kind, principalID uuid.UUID) ([]app.FlagForActor, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, flagEvaluate, string(kind), principalID)
	if err != nil {
		return nil, fmt.Errorf("instance: flags for actor: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.FlagForActor, error) {
		var f app.FlagForActor
		err := row.Scan(&f.Key, &f.DefaultEnabled, &f.KindOverride, &f.PrincipalOverride)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("instance: flags for actor: %w", err)
	}
	return out, nil
}

// ListFlags implements app.FlagStore.
func (s *Store) ListFlags(ctx context.Context) ([]instance.Flag, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, flagList)
	if err != nil {
		return nil, fmt.Errorf("instance: list flags: %w", err)
	}
	flags, err := pgx.CollectRows(rows, scanFlag)
	if err != nil {
		return nil, fmt.Errorf("instance: list flags: %w", err)
	}
	overrides, err := s.overrides(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range flags {
		flags[i].Overrides = overridesOf(overrides, flags[i].Key)
	}
	return flags, nil
}

// GetFlag implements app.FlagStore.
func (s *Store) GetFlag(ctx context.Context, key string) (instance.Flag, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, flagGet, key)
	if err != nil {
		return instance.Flag{}, fmt.Errorf("instance: get flag: %w", err)
	}
	flag, err := pgx.CollectExactlyOneRow(rows, scanFlag)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.Flag{}, instance.ErrFlagNotFound
	}
	if err != nil {
		return instance.Flag{}, fmt.Errorf("instance: get flag: %w", err)
	}
	overrides, err := s.overrides(ctx, key)
	if err != nil {
		return instance.Flag{}, err
	}
	flag.Overrides = overridesOf(overrides, key)
	return flag, nil
}

// LockFlag implements app.FlagStore.
func (s *Store) LockFlag(ctx context.Context, key string) error {
	var got string
	err := s.runner.DB(ctx).QueryRow(ctx, flagLock, key).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.ErrFlagNotFound
	}
	if err != nil {
		return fmt.Errorf("instance: lock flag: %w", err)
	}
	return nil
}

// PutFlag implements app.FlagStore.
func (s *Store) PutFlag(ctx context.Context, key, description string, defaultEnabled bool) (bool, error) {
	var got string
	err := s.runner.DB(ctx).QueryRow(ctx, flagPut, key, description, defaultEnabled).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("instance: put flag: %w", err)
	}
	return true, nil
}

// DeleteFlag implements app.FlagStore.
func (s *Store) DeleteFlag(ctx context.Context, key string) (bool, error) {
	tag, err := s.runner.DB(ctx).Exec(ctx, flagDelete, key)
	if err != nil {
		return false, fmt.Errorf("instance: delete flag: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// TouchFlag implements app.FlagStore.
func (s *Store) TouchFlag(ctx context.Context, key string) error {
	tag, err := s.runner.DB(ctx).Exec(ctx, flagTouch, key)
	if err != nil {
		return fmt.Errorf("instance: touch flag: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return instance.ErrFlagNotFound
	}
	return nil
}

// PutOverride implements app.FlagStore.
func (s *Store) PutOverride(ctx context.Context, key string, target instance.FlagTarget, enabled bool) (bool, error) {
	if err := target.Validate(); err != nil {
		return false, fmt.Errorf("instance: put override: %w", err)
	}
	query, arg := flagOverridePrincipalPut, any(target.PrincipalID)
	if target.PrincipalID == uuid.Nil {
		query, arg = flagOverrideKindPut, string(target.Kind)
	}
	tag, err := s.runner.DB(ctx).Exec(ctx, query, key, arg, enabled)
	if err != nil {
		return false, fmt.Errorf("instance: put override: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// DeleteOverride implements app.FlagStore.
func (s *Store) DeleteOverride(ctx context.Context, key string, target instance.FlagTarget) (bool, error) {
	if err := target.Validate(); err != nil {
		return false, fmt.Errorf("instance: delete override: %w", err)
	}
	query, arg := flagOverridePrincipalDelete, any(target.PrincipalID)
	if target.PrincipalID == uuid.Nil {
		query, arg = flagOverrideKindDelete, string(target.Kind)
	}
	tag, err := s.runner.DB(ctx).Exec(ctx, query, key, arg)
	if err != nil {
		return false, fmt.Errorf("instance: delete override: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// overrides returns the overrides of every flag (key "") or of one flag, by flag key, each
// list in the order of instance.Flag.Overrides.
func (s *Store) overrides(ctx context.Context, key string) (map[string][]instance.FlagOverride, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, flagOverrideList, key)
	if err != nil {
		return nil, fmt.Errorf("instance: list flag overrides: %w", err)
	}
	out := map[string][]instance.FlagOverride{}
	var (
		flagKey     string
		kind        *string
		principalID *uuid.UUID
		enabled     bool
	)
	_, err = pgx.ForEachRow(rows, []any{&flagKey, &kind, &principalID, &enabled}, func() error {
		o := instance.FlagOverride{Enabled: enabled}
		if principalID != nil {
			o.Target = instance.PrincipalTarget(*principalID)
		} else if kind != nil {
			o.Target = instance.KindTarget(actor.Kind(*kind))
		}
		out[flagKey] = append(out[flagKey], o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("instance: list flag overrides: %w", err)
	}
	return out, nil
}

// overridesOf returns the overrides of key, an empty list rather than nil when it has none.
func overridesOf(m map[string][]instance.FlagOverride, key string) []instance.FlagOverride {
	if o := m[key]; o != nil {
		return o
	}
	return []instance.FlagOverride{}
}

// scanFlag reads a row of flag_list.sql or flag_get.sql, without the overrides.
func scanFlag(row pgx.CollectableRow) (instance.Flag, error) {
	var (
		f                    instance.Flag
		createdAt, updatedAt time.Time
	)
	if err := row.Scan(&f.Key, &f.Description, &f.DefaultEnabled, &f.Version, &createdAt, &updatedAt); err != nil {
		return instance.Flag{}, err
	}
	f.CreatedAt, f.UpdatedAt = createdAt.UTC(), updatedAt.UTC()
	return f, nil
}
