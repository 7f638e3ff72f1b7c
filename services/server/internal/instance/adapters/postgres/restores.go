package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/ids"
)

var (
	//go:embed queries/instance_rotate_epoch.sql
	instanceRotateEpoch string
	//go:embed queries/restore_list.sql
	restoreList string
)

var _ instance.Restores = (*Store)(nil)

// maxRestoreSource bounds RestoreInput.Source, as the table's check does.
const maxRestoreSource = 4096

// RotateEpoch implements instance.Restores.
func (s *Store) RotateEpoch(ctx context.Context, in instance.RestoreInput) (instance.Restore, error) {
	if in.At.IsZero() || in.Source == "" || len(in.Source) > maxRestoreSource ||
		(in.How != instance.RestoreByCommand && in.How != instance.RestoreDetected) {
		return instance.Restore{}, instance.ErrInvalidRestore
	}
	var takenAt *time.Time
	if !in.BackupTakenAt.IsZero() {
		takenAt = &in.BackupTakenAt
	}
	row := s.runner.DB(ctx).QueryRow(ctx, instanceRotateEpoch, ids.New(), ids.New(), in.At, string(in.How), in.Source, takenAt)
	r, err := scanRestore(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.Restore{}, instance.ErrNoInstance
	}
	if err != nil {
		return instance.Restore{}, fmt.Errorf("instance: rotate sync epoch: %w", err)
	}
	return r, nil
}

// ListRestores implements instance.Restores.
func (s *Store) ListRestores(ctx context.Context) ([]instance.Restore, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, restoreList)
	if err != nil {
		return nil, fmt.Errorf("instance: list restores: %w", err)
	}
	defer rows.Close()
	out := []instance.Restore{}
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, fmt.Errorf("instance: list restores: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("instance: list restores: %w", err)
	}
	return out, nil
}

func scanRestore(row pgx.Row) (instance.Restore, error) {
	var (
		r       instance.Restore
		how     string
		takenAt *time.Time
		oldE    uuid.UUID
		newE    uuid.UUID
	)
	if err := row.Scan(&r.ID, &r.RestoredAt, &how, &r.Source, &takenAt, &r.HeadSeq, &oldE, &newE); err != nil {
		return instance.Restore{}, err
	}
	r.How, r.OldEpoch, r.NewEpoch = instance.RestoreHow(how), oldE, newE
	r.RestoredAt = r.RestoredAt.UTC()
	if takenAt != nil {
		r.BackupTakenAt = takenAt.UTC()
	}
	return r, nil
}
