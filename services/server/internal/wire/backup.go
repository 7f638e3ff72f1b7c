package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pglocal"
)

// ErrDatabaseInUse is returned by Restore while other sessions are connected to the database (a
// bothy serve, a bothy admin, a psql): restoring under a running server would leave its caches
// and its log tail on a log that no longer exists. Stop them first.
var ErrDatabaseInUse = errors.New("the database is in use: stop bothy serve (and every other client of the database) before restoring")

// ErrNotABackup is returned by Restore for an archive that holds no bothy instance.
var ErrNotABackup = errors.New("the file is no bothy backup (its archive creates no schema instance)")

// BackupProgress is how far a backup or a restore has come (pg_dump's or pg_restore's steps).
type BackupProgress = pglocal.Progress

// BackupOptions are what bothy admin backup chooses.
type BackupOptions struct {
	// File receives the archive; it is written beside it first and renamed into place once
	// pg_dump succeeded, so a failed backup leaves no file under that name.
	File string
	// Progress, when set, is told after every step of pg_dump.
	Progress func(BackupProgress)
}

// BackupReport is what bothy admin backup prints.
type BackupReport struct {
	// File is the archive's absolute path.
	File string `json:"file"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
	// InstanceID and SyncEpoch name the instance and the epoch the backup carries.
	InstanceID string `json:"instance_id"`
	SyncEpoch  string `json:"sync_epoch"`
	// HeadSeq is the head of the log read just before pg_dump started; the backup holds at
	// least every event up to it.
	HeadSeq int64 `json:"head_seq"`
	// Tables is the number of tables whose data the backup holds.
	Tables int `json:"tables"`
	// ElapsedMS is how long the backup took.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// backupSchemas are the schemas a backup holds and a restore replaces: the migrations'
// bookkeeping and every module's.
func backupSchemas() []string {
	out := []string{migrate.MetaSchema}
	for _, s := range Migrations() {
		out = append(out, s.Schema)
	}
	return out
}

// Backup writes the database at url into o.File with pg_dump --format=custom (bothy's schemas
// only, without owners and privileges, so that it restores into the embedded default as well as
// into an external database). It may run while bothy serve runs: pg_dump reads one consistent
// snapshot.
func Backup(ctx context.Context, url string, o BackupOptions) (BackupReport, error) {
	start := time.Now()
	if o.File == "" {
		return BackupReport{}, errors.New("backup: no file given")
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	tools, err := pglocal.FindTools()
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	rep := BackupReport{File: file}
	if err := readBackupState(ctx, url, &rep); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	partial := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".partial")
	defer func() { _ = os.Remove(partial) }()
	err = tools.Dump(ctx, pglocal.DumpOptions{
		URL: url, File: partial, Schemas: backupSchemas(), Tables: rep.Tables, Progress: o.Progress,
	})
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	// The archive holds what the database holds: readable by its owner only.
	if err := os.Chmod(partial, 0o600); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(partial, file); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	rep.Bytes = fi.Size()
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, nil
}

// readBackupState reads the instance, the head and the number of tables the dump will write.
func readBackupState(ctx context.Context, url string, rep *BackupReport) error {
	pool, err := NewPool(ctx, url, 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	store := instancepg.New(tx.NewRunner(pool))
	info, err := store.Info(ctx)
	if err != nil {
		return err
	}
	head, err := store.EventSeq(ctx)
	if err != nil {
		return err
	}
	rep.InstanceID, rep.SyncEpoch, rep.HeadSeq = info.ID.String(), info.SyncEpoch.String(), head
	const tables = `SELECT count(*) FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = ANY($1)`
	if err := pool.QueryRow(ctx, tables, backupSchemas()).Scan(&rep.Tables); err != nil {
		return fmt.Errorf("count tables: %w", err)
	}
	return nil
}

// RestoreOptions are what bothy admin restore chooses.
type RestoreOptions struct {
	// File is an archive bothy admin backup (or pg_dump --format=custom of bothy's schemas)
	// wrote.
	File string
	// Progress, when set, is told after every step of pg_restore.
	Progress func(BackupProgress)
	// Clock gives the time recorded for the restore; nil means clock.System().
	Clock clock.Clock
}

// RestoreReport is what bothy admin restore prints.
type RestoreReport struct {
	// File is the archive's absolute path.
	File string `json:"file"`
	// BackupTakenAt is when pg_dump wrote it (RFC 3339, UTC); empty when its header lacks it.
	BackupTakenAt string `json:"backup_taken_at"`
	// Entries is the number of entries of its table of contents.
	Entries int `json:"entries"`
	// Applied is the number of migrations applied after the restore (a backup of an older
	// bothy is brought to this one's schema).
	Applied int `json:"applied"`
	// RestoreID identifies the record of the restore (instance.restores).
	RestoreID string `json:"restore_id"`
	// HeadSeq is the head of the restored log.
	HeadSeq int64 `json:"head_seq"`
	// OldEpoch is the epoch the backup carried; NewEpoch replaced it, so that every client
	// gets epoch_changed and resyncs.
	OldEpoch string `json:"old_epoch"`
	NewEpoch string `json:"new_epoch"`
	// ElapsedMS is how long the restore took.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// Restore replaces bothy's schemas in the database at url with the backup o.File and rotates the
// sync epoch (ADR 0021):
//
//  1. it reads the archive's table of contents and refuses a file that holds no bothy instance
//     (ErrNotABackup);
//  2. it refuses while any other session is connected to the database (ErrDatabaseInUse): a
//     running bothy serve would keep serving from caches and a log tail of the log it replaces;
//  3. it drops bothy's schemas (and the archive's) in one transaction, then runs pg_restore in
//     one transaction (a failed pg_restore leaves the schemas empty: restore again);
//  4. it applies the migrations this bothy has and the backup lacks (wire.Migrate, which also
//     runs a partition upkeep);
//  5. it gives the instance a fresh sync epoch and records the restore (instance.restores):
//     every cursor issued before, newer or older than the backup, now gets epoch_changed over
//     REST and the gateway, and every snapshot's ETag changes.
//
// For the embedded default the caller starts the cluster exclusively (DatabaseExclusive), so
// that a bothy serve can neither run beside it nor attach while it restores.
func Restore(ctx context.Context, cfg *config.Config, url string, logger *slog.Logger, o RestoreOptions) (RestoreReport, error) {
	start := time.Now()
	if o.File == "" {
		return RestoreReport{}, errors.New("restore: no file given")
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	tools, err := pglocal.FindTools()
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	archive, err := tools.List(ctx, file)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	if !slices.Contains(archive.Schemas, instancepg.Schema) {
		return RestoreReport{}, fmt.Errorf("restore: %s: %w", file, ErrNotABackup)
	}
	if err := emptySchemas(ctx, url, archive.Schemas); err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	logger.InfoContext(ctx, "restoring", "file", file, "entries", archive.Entries)
	err = tools.Restore(ctx, pglocal.RestoreOptions{URL: url, File: file, Entries: archive.Entries, Progress: o.Progress})
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w (bothy's schemas are empty now: restore a backup again)", err)
	}
	applied, err := Migrate(ctx, cfg, url, logger)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: after pg_restore: %w", err)
	}
	rec, err := rotateEpoch(ctx, url, instance.RestoreInput{
		At: o.Clock.Now().UTC(), How: instance.RestoreByCommand, Source: file, BackupTakenAt: archive.CreatedAt,
	})
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	logger.InfoContext(ctx, "restored; the sync epoch rotated",
		"file", file, "head_seq", rec.HeadSeq, "old_epoch", rec.OldEpoch.String(), "new_epoch", rec.NewEpoch.String())
	rep := RestoreReport{
		File: file, Entries: archive.Entries, Applied: applied, RestoreID: rec.ID.String(), HeadSeq: rec.HeadSeq,
		OldEpoch: rec.OldEpoch.String(), NewEpoch: rec.NewEpoch.String(), ElapsedMS: time.Since(start).Milliseconds(),
	}
	if !archive.CreatedAt.IsZero() {
		rep.BackupTakenAt = archive.CreatedAt.Format(time.RFC3339)
	}
	return rep, nil
}

// emptySchemas refuses while other sessions use the database, then drops bothy's schemas and
// the archive's extra ones in one transaction, on one connection of its own.
func emptySchemas(ctx context.Context, url string, archiveSchemas []string) error {
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		return errors.New("database.url is not a valid PostgreSQL URL")
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	const others = `SELECT count(*), coalesce(string_agg(DISTINCT nullif(application_name, ''), ', '), '')
		FROM pg_catalog.pg_stat_activity
		WHERE datname = pg_catalog.current_database() AND pid <> pg_catalog.pg_backend_pid()
		  AND backend_type = 'client backend'`
	var (
		n    int
		apps string
	)
	if err := conn.QueryRow(ctx, others).Scan(&n, &apps); err != nil {
		return fmt.Errorf("look for other sessions: %w", err)
	}
	if n > 0 {
		if apps != "" {
			apps = " (" + apps + ")"
		}
		return fmt.Errorf("%w: %d other sessions%s", ErrDatabaseInUse, n, apps)
	}
	drop := backupSchemas()
	for _, s := range archiveSchemas {
		if !slices.Contains(drop, s) && s != "public" {
			drop = append(drop, s)
		}
	}
	var b strings.Builder
	for _, s := range drop {
		b.WriteString("DROP SCHEMA IF EXISTS " + pgx.Identifier{s}.Sanitize() + " CASCADE;\n")
	}
	return pgx.BeginFunc(ctx, conn, func(t pgx.Tx) error {
		if _, err := t.Exec(ctx, b.String()); err != nil {
			return fmt.Errorf("drop bothy's schemas: %w", err)
		}
		return nil
	})
}

// rotateEpoch gives the instance a fresh sync epoch, records the restore, and records the
// cluster's identity, so that the start-up check (ReconcileClusterIdentity) does not take the
// backup's identity for a restore behind bothy's back and rotate again.
func rotateEpoch(ctx context.Context, url string, in instance.RestoreInput) (instance.Restore, error) {
	pool, err := NewPool(ctx, url, 1)
	if err != nil {
		return instance.Restore{}, err
	}
	defer pool.Close()
	store := instancepg.New(tx.NewRunner(pool))
	r, err := store.RotateEpoch(ctx, in)
	if err != nil {
		return instance.Restore{}, err
	}
	if _, err := store.Record(ctx, in.At); err != nil {
		return instance.Restore{}, err
	}
	return r, nil
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
