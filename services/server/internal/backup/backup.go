// Package backup is bothy admin backup and bothy admin restore: a pg_dump archive of bothy's
// schemas, and its restore into a fresh database that replaces the old one only once it is
// complete, with the sync epoch rotated (spec 06, ADR 0021, ADR 0035). It reaches the modules
// through their public ports only; the composition root builds it.
package backup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/pglocal"
)

var (
	//go:embed queries/count_tables.sql
	countTables string
	//go:embed queries/other_sessions.sql
	otherSessions string
	//go:embed queries/sessions_of.sql
	sessionsOf string
	//go:embed queries/target_database.sql
	targetDatabase string
)

// Progress is how far a backup or a restore has come (pg_dump's or pg_restore's steps).
type Progress = pglocal.Progress

// Ports are the modules' ports a backup and a restore use, over one database.
type Ports struct {
	// Instance names the instance a database holds and rotates its epoch after a restore.
	Instance instance.Epoch
	// Versions gives the head of the log a backup holds.
	Versions instance.Versions
}

// Deps are what the composition root gives the tool.
type Deps struct {
	// Open opens the ports over the database at url; release closes every connection they
	// hold. The tool opens them only while it needs them: a restore checks that no other
	// session uses the database, and renames it, with none of its own open.
	Open func(ctx context.Context, url string) (p Ports, release func(), err error)
	// Migrate applies this bothy's migrations to the database at url and makes it ready to
	// serve (bothy migrate's steps); it returns the number of migrations applied.
	Migrate func(ctx context.Context, url string) (applied int, err error)
	// Schemas are the schemas a backup holds: the migrations' bookkeeping and every module's.
	Schemas []string
	// Logger receives what a restore reports; nil discards it.
	Logger *slog.Logger
}

// Tool runs backups and restores.
type Tool struct {
	deps Deps
}

// New returns the tool over deps.
func New(deps Deps) *Tool {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Tool{deps: deps}
}

// Options are what bothy admin backup chooses.
type Options struct {
	// File receives the archive; it is written beside it first and renamed into place once
	// pg_dump succeeded, so a failed backup leaves no file under that name.
	File string
	// Progress, when set, is told after every step of pg_dump.
	Progress func(Progress)
}

// Report is what bothy admin backup prints.
type Report struct {
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

// Backup writes the database at url into o.File with pg_dump --format=custom (bothy's schemas
// only, without owners and privileges, so that it restores into the embedded default as well as
// into an external database). It may run while bothy serve runs: pg_dump reads one consistent
// snapshot.
func (t *Tool) Backup(ctx context.Context, url string, o Options) (Report, error) {
	start := time.Now()
	if o.File == "" {
		return Report{}, errors.New("backup: no file given")
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	tools, err := pglocal.FindTools()
	if err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	rep := Report{File: file}
	if err := t.readBackupState(ctx, url, &rep); err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	partial := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".partial")
	defer func() { _ = os.Remove(partial) }()
	err = tools.Dump(ctx, pglocal.DumpOptions{
		URL: url, File: partial, Schemas: t.deps.Schemas, Tables: rep.Tables, Progress: o.Progress,
	})
	if err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	// The archive holds what the database holds: readable by its owner only.
	if err := os.Chmod(partial, 0o600); err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(partial, file); err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return Report{}, fmt.Errorf("backup: %w", err)
	}
	rep.Bytes = fi.Size()
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, nil
}

// readBackupState reads the instance, the head and the number of tables the dump will write.
func (t *Tool) readBackupState(ctx context.Context, url string, rep *Report) error {
	ports, closePorts, err := t.deps.Open(ctx, url)
	if err != nil {
		return err
	}
	defer closePorts()
	info, err := ports.Instance.Info(ctx)
	if err != nil {
		return err
	}
	head, err := ports.Versions.EventSeq(ctx)
	if err != nil {
		return err
	}
	rep.InstanceID, rep.SyncEpoch, rep.HeadSeq = info.ID.String(), info.SyncEpoch.String(), head
	return withConn(ctx, url, func(conn *pgx.Conn) error {
		if err := conn.QueryRow(ctx, countTables, t.deps.Schemas).Scan(&rep.Tables); err != nil {
			return fmt.Errorf("count tables: %w", err)
		}
		return nil
	})
}

// withConn runs fn on a connection of its own to the database at url, closed when fn returns.
func withConn(ctx context.Context, url string, fn func(conn *pgx.Conn) error) error {
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		// The URL may hold a password: do not repeat it.
		return errors.New("database.url is not a valid PostgreSQL URL")
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	return fn(conn)
}

// now is the clock of a restore's record: o.Clock, else the system's.
func now(c clock.Clock) time.Time {
	if c == nil {
		c = clock.System()
	}
	return c.Now().UTC()
}
