package backup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/pglocal"
)

// instanceSchema is the schema that makes an archive a bothy backup, and its table whose row
// names the instance.
const (
	instanceSchema = "instance"
	instanceTable  = "instance"
)

// ErrDatabaseInUse is returned by Restore while other sessions are connected to the database (a
// bothy serve, a bothy admin, a psql): restoring under a running server would leave its caches
// and its log tail on a log that no longer exists. Stop them first.
var ErrDatabaseInUse = errors.New("the database is in use: stop bothy serve (and every other client of the database) before restoring")

// ErrNotABackup is returned by Restore for an archive that holds no bothy instance.
var ErrNotABackup = errors.New("the file is no bothy backup (its archive creates no schema instance)")

// ErrOtherInstance is returned by Restore for a backup of another instance than the one the
// database holds, unless RestoreOptions.AllowOtherInstance: restoring it replaces the instance
// id, and every token and session of this instance stops working.
var ErrOtherInstance = errors.New("the backup is of another instance")

// ErrCannotSwitch is returned by Restore when the connecting role may not create a database
// beside the old one, or rename and drop the old one (it needs CREATEDB and to own the
// database, or to be a superuser). Nothing has changed.
var ErrCannotSwitch = errors.New("the role may not restore into a fresh database and switch it in: it needs CREATEDB and to own the database (or to be a superuser)")

// RestoreOptions are what bothy admin restore chooses.
type RestoreOptions struct {
	// File is an archive bothy admin backup (or pg_dump --format=custom of bothy's schemas)
	// wrote.
	File string
	// AllowOtherInstance restores a backup of another instance (bothy admin restore
	// --allow-other-instance); without it such a backup is refused with ErrOtherInstance.
	AllowOtherInstance bool
	// Progress, when set, is told after every step of pg_restore.
	Progress func(Progress)
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

// Restore replaces the database at url with the backup o.File and rotates the sync epoch
// (ADR 0021), so that nothing is lost when any step fails (ADR 0035):
//
//  1. it reads the archive's table of contents and refuses a file that holds no bothy instance
//     (ErrNotABackup);
//  2. it refuses while any other session is connected to the database (ErrDatabaseInUse), when
//     the role may not create, rename and drop databases (ErrCannotSwitch), and for a backup of
//     another instance unless o.AllowOtherInstance (ErrOtherInstance);
//  3. in a fresh database beside the old one, it runs pg_restore in one transaction, applies
//     the migrations this bothy has and the backup lacks (Deps.Migrate), and rotates the sync
//     epoch (instance.Epoch.RotateAfterRestore): every cursor issued before, newer or older
//     than the backup, then gets epoch_changed, and every snapshot's ETag changes;
//  4. only then it switches the two databases by renaming both in one transaction, and drops
//     the old one. A failure before the switch drops the fresh database: the old one serves
//     as it was.
//
// For the embedded default the caller starts the cluster exclusively, so that a bothy serve can
// neither run beside it nor attach while it restores.
func (t *Tool) Restore(ctx context.Context, url string, o RestoreOptions) (RestoreReport, error) {
	start := time.Now()
	if o.File == "" {
		return RestoreReport{}, errors.New("restore: no file given")
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
	if !slices.Contains(archive.Schemas, instanceSchema) {
		return RestoreReport{}, fmt.Errorf("restore: %s: %w", file, ErrNotABackup)
	}
	// Every session this restore opens calls itself own, so that the switch can wait for them
	// to end and tell them from anyone else's.
	own := "bothy-restore-" + ids.New().String()
	url = withApplicationName(url, own)
	target, err := inspect(ctx, url)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	if err := t.checkInstance(ctx, tools, url, file, target, o.AllowOtherInstance); err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	maint, err := connectMaintenance(ctx, url, target.name)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	defer func() { _ = maint.Close(context.WithoutCancel(ctx)) }()
	fresh := target.sibling("_restoring")
	if err := createFresh(ctx, maint, own, target, fresh); err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w", err)
	}
	switched := false
	defer func() {
		if !switched {
			_ = dropDatabase(context.WithoutCancel(ctx), maint, own, fresh)
		}
	}()
	rep, err := t.fill(ctx, tools, withDatabase(url, fresh), file, archive, o)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w (the database is as it was before)", err)
	}
	replaced := target.sibling("_replaced")
	if err := switchDatabases(ctx, maint, own, target.name, fresh, replaced); err != nil {
		return RestoreReport{}, fmt.Errorf("restore: %w (the database is as it was before)", err)
	}
	switched = true
	if err := dropDatabase(ctx, maint, own, replaced); err != nil {
		t.deps.Logger.WarnContext(ctx, "restored, but the replaced database could not be dropped: drop it by hand",
			"database", replaced, "error", err.Error())
	}
	t.deps.Logger.InfoContext(ctx, "restored; the sync epoch rotated",
		"file", file, "head_seq", rep.HeadSeq, "old_epoch", rep.OldEpoch, "new_epoch", rep.NewEpoch)
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, nil
}

// checkInstance refuses a backup of another instance than the one the database holds, unless
// allowed. A database without an instance (a fresh install, or one a failed restore of an
// older bothy emptied) takes any backup.
func (t *Tool) checkInstance(ctx context.Context, tools pglocal.Tools, url, file string, target database, allow bool) error {
	if allow || !target.hasInstance {
		return nil
	}
	rows, err := tools.TableRows(ctx, file, instanceSchema, instanceTable)
	if err != nil {
		return err
	}
	if len(rows) != 1 || rows[0]["id"] == "" {
		return fmt.Errorf("%s: %w", file, ErrNotABackup)
	}
	theirs := rows[0]["id"]
	ports, closePorts, err := t.deps.Open(ctx, url)
	if err != nil {
		return err
	}
	defer closePorts()
	ours, err := ports.Instance.Info(ctx)
	switch {
	case errors.Is(err, instance.ErrNoInstance):
		return nil
	case err != nil:
		return err
	case ours.ID.String() == theirs:
		return nil
	}
	return fmt.Errorf("%w: the backup holds instance %s, the database instance %s; restoring it replaces the instance id, "+
		"and every token of this instance stops working (pass --allow-other-instance to restore it anyway)",
		ErrOtherInstance, theirs, ours.ID)
}

// fill restores the archive into the fresh database at url, migrates it and rotates its epoch.
func (t *Tool) fill(ctx context.Context, tools pglocal.Tools, url, file string, archive pglocal.Archive, o RestoreOptions) (RestoreReport, error) {
	t.deps.Logger.InfoContext(ctx, "restoring into a fresh database", "file", file, "entries", archive.Entries)
	err := tools.Restore(ctx, pglocal.RestoreOptions{URL: url, File: file, Entries: archive.Entries, Progress: o.Progress})
	if err != nil {
		return RestoreReport{}, err
	}
	applied, err := t.deps.Migrate(ctx, url)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("after pg_restore: %w", err)
	}
	ports, closePorts, err := t.deps.Open(ctx, url)
	if err != nil {
		return RestoreReport{}, err
	}
	defer closePorts()
	rec, err := ports.Instance.RotateAfterRestore(ctx, instance.RestoreInput{
		At: now(o.Clock), How: instance.RestoreByCommand, Source: file, BackupTakenAt: archive.CreatedAt,
	})
	if err != nil {
		return RestoreReport{}, err
	}
	rep := RestoreReport{
		File: file, Entries: archive.Entries, Applied: applied, RestoreID: rec.ID.String(), HeadSeq: rec.HeadSeq,
		OldEpoch: rec.OldEpoch.String(), NewEpoch: rec.NewEpoch.String(),
	}
	if !archive.CreatedAt.IsZero() {
		rep.BackupTakenAt = archive.CreatedAt.Format(time.RFC3339)
	}
	return rep, nil
}
