package wire

import (
	"context"
	"fmt"
	"log/slog"

	"bothy.example.com/server/internal/backup"
	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
)

// The backup tool's values, for bothy admin backup and restore (package backup).
type (
	// BackupProgress is how far a backup or a restore has come.
	BackupProgress = backup.Progress
	// BackupOptions are what bothy admin backup chooses.
	BackupOptions = backup.Options
	// BackupReport is what bothy admin backup prints.
	BackupReport = backup.Report
	// RestoreOptions are what bothy admin restore chooses.
	RestoreOptions = backup.RestoreOptions
	// RestoreReport is what bothy admin restore prints.
	RestoreReport = backup.RestoreReport
)

// The backup tool's refusals (package backup).
var (
	// ErrDatabaseInUse: other sessions use the database; stop them before restoring.
	ErrDatabaseInUse = backup.ErrDatabaseInUse
	// ErrNotABackup: the archive holds no bothy instance.
	ErrNotABackup = backup.ErrNotABackup
	// ErrOtherInstance: the backup is of another instance and RestoreOptions.AllowOtherInstance
	// is not set.
	ErrOtherInstance = backup.ErrOtherInstance
)

// Backups builds the backup tool: the instance module's ports over a pool of one connection
// opened per use, and bothy migrate's steps for the restored database.
func Backups(cfg *config.Config, logger *slog.Logger) *backup.Tool {
	schemas := []string{migrate.MetaSchema}
	for _, s := range Migrations() {
		schemas = append(schemas, s.Schema)
	}
	return backup.New(backup.Deps{
		Open: func(ctx context.Context, url string) (backup.Ports, func(), error) {
			pool, err := NewPool(ctx, url, 1)
			if err != nil {
				return backup.Ports{}, nil, err
			}
			store := instancepg.New(tx.NewRunner(pool))
			return backup.Ports{Instance: instanceapp.NewEpoch(store), Versions: store}, pool.Close, nil
		},
		Migrate: func(ctx context.Context, url string) (int, error) { return Migrate(ctx, cfg, url, logger) },
		Schemas: schemas,
		Logger:  logger,
	})
}

// Backup writes the database at url into o.File (backup.Tool.Backup).
func Backup(ctx context.Context, url string, o BackupOptions) (BackupReport, error) {
	return Backups(nil, nil).Backup(ctx, url, o)
}

// Restore replaces the database at url with the backup o.File and rotates the sync epoch
// (backup.Tool.Restore).
func Restore(ctx context.Context, cfg *config.Config, url string, logger *slog.Logger, o RestoreOptions) (RestoreReport, error) {
	return Backups(cfg, logger).Restore(ctx, url, o)
}

// ReconcileClusterIdentity is the start-up check of bothy serve (ADR 0021): when the database
// was restored into another PostgreSQL cluster, or recovered to an earlier point (a new
// timeline), behind bothy's back, it rotates the sync epoch and records that, so that every
// client resyncs; it logs a warning when it did. A role that may not read the cluster's control
// data skips the check (logged at info).
func (a *App) ReconcileClusterIdentity(ctx context.Context) error {
	r, rotated, ok, err := instancepg.New(a.tx).Reconcile(ctx, a.clock.Now().UTC())
	switch {
	case err != nil:
		return fmt.Errorf("check the cluster's identity: %w", err)
	case !ok:
		a.logger.InfoContext(ctx, "cannot read the cluster's control data (pg_control_system): a restore behind bothy's back is not detected")
	case rotated:
		a.logger.WarnContext(ctx, "the database was restored or recovered behind bothy's back; the sync epoch rotated and every client resyncs",
			"source", r.Source, "head_seq", r.HeadSeq, "old_epoch", r.OldEpoch.String(), "new_epoch", r.NewEpoch.String())
	}
	return nil
}

// Restores lists every rotation of the sync epoch (instance.restores), oldest first.
func (a *App) Restores(ctx context.Context) ([]instance.Restore, error) {
	return instancepg.New(a.tx).ListRestores(ctx)
}

// DatabaseExclusive is Database for a restore: with database.url empty it starts the embedded
// default only when no other process runs it (pglocal.ErrInUse otherwise, wrapped with
// ErrDatabaseInUse), and keeps any bothy process that starts meanwhile waiting until it is done.
func DatabaseExclusive(ctx context.Context, cfg *config.Config, logger *slog.Logger) (url string, stop func(context.Context) error, err error) {
	return database(ctx, cfg, logger, true)
}
