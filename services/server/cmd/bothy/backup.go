package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wire"
)

// adminBackup writes the database (the embedded default, or database.url) into a pg_dump
// archive and prints its report.
func adminBackup(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var file string
	configPath, err := flags("admin backup", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "file", "", "the archive to write (default bothy-<UTC time>.dump in the current directory)")
	})
	if err != nil {
		return err
	}
	if file == "" {
		file = "bothy-" + time.Now().UTC().Format("20060102T150405Z") + ".dump"
	}
	return withDatabase(ctx, configPath, environ, stderr, func(ctx context.Context, _ *config.Config, logger *slog.Logger, url string) error {
		p := newProgress(stderr, logger)
		rep, err := wire.Backups(nil, logger).Backup(ctx, url, wire.BackupOptions{File: file, Progress: p.update})
		p.finish()
		if err != nil {
			return fail(ctx, logger, "backup", err)
		}
		logger.InfoContext(ctx, "backup written", "file", rep.File, "bytes", rep.Bytes, "head_seq", rep.HeadSeq)
		return writeJSON(stdout, rep)
	})
}

// adminRestore replaces the database with a backup and rotates the sync epoch. The embedded
// default is started exclusively: a bothy serve on the same embedded.dir makes it fail, and one
// that starts meanwhile waits for it.
func adminRestore(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var (
		file          string
		otherInstance bool
	)
	configPath, err := flags("admin restore", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "file", "", "the archive bothy admin backup wrote (required)")
		fs.BoolVar(&otherInstance, "allow-other-instance", false,
			"restore a backup of another instance: its instance id replaces this one's, and this instance's tokens stop working")
	})
	if err != nil {
		return err
	}
	if file == "" {
		return fmt.Errorf("%w: admin restore: --file is required", errUsage)
	}
	return withDatabaseVia(ctx, wire.DatabaseExclusive, configPath, environ, stderr,
		func(ctx context.Context, cfg *config.Config, logger *slog.Logger, url string) error {
			p := newProgress(stderr, logger)
			rep, err := wire.Backups(cfg, logger).Restore(ctx, url,
				wire.RestoreOptions{File: file, AllowOtherInstance: otherInstance, Progress: p.update})
			p.finish()
			if err != nil {
				return fail(ctx, logger, "restore", err)
			}
			return writeJSON(stdout, rep)
		})
}

// progress shows how far pg_dump or pg_restore has come: a bar on stderr when it is a
// terminal, else a log line at every tenth of the way (stderr keeps its JSON lines).
type progress struct {
	bar    *progressBar
	logger *slog.Logger
	tenth  int // the last tenth logged
	step   string
}

func newProgress(stderr io.Writer, logger *slog.Logger) *progress {
	p := &progress{logger: logger, tenth: -1}
	if isTerminal(stderr) {
		p.bar = &progressBar{w: stderr}
	}
	return p
}

// update shows one report.
func (p *progress) update(s wire.BackupProgress) {
	if p.bar != nil {
		p.bar.draw(s.Step, s.Done, s.Total)
		return
	}
	if s.Total <= 0 {
		return
	}
	if s.Step != p.step {
		p.step, p.tenth = s.Step, -1
	}
	if tenth := s.Done * 10 / s.Total; tenth != p.tenth {
		p.tenth = tenth
		p.logger.Info(s.Step+" progress", "done", s.Done, "total", s.Total, "percent", tenth*10)
	}
}

// finish ends the bar's line.
func (p *progress) finish() {
	p.bar.finish()
}

// progressLine is the bar's text for done of total steps of step, barWidth cells wide.
func progressLine(step string, done, total int) string {
	filled := 0
	if total > 0 {
		filled = min(barWidth, done*barWidth/total)
	}
	return fmt.Sprintf("\r%-8s [%s%s] %d/%d", step, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), done, total)
}
