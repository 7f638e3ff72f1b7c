package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"bothy.example.com/server/internal/wire"
)

// ingestUsage is the help of bothy ingest.
const ingestUsage = `usage:
  bothy ingest git --repo PATH --channel ID [--issues-json FILE] [--prs-json FILE]
                   [--max-items N] [--config FILE]
      write a repository's pull requests, issues and commits into a channel of a
      space, as the app @git-ingest (created on first use with a member grant on
      the channel): pull requests and issues become threads, commits messages in
      the thread of the pull request that merged them or in the branch's
      "commits" thread. One pass: what exists already is skipped at no cost, so a
      rerun continues where the last stopped. Pull requests and issues come from
      gh when it is installed and authenticated, else from the JSON files (gh's
      --json output format); without either, those sections are skipped.
      --max-items bounds the creation attempts of the pass (0: no bound).
      Prints the report as one line of JSON; exits 1 when a record failed (the
      next pass retries it). A progress bar goes to stderr when it is a terminal.
`

// ingestCmd runs a bothy ingest subcommand.
func ingestCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: ingest: missing subcommand (git)", errUsage)
	}
	switch args[0] {
	case "git":
		return ingestGit(ctx, args[1:], environ, stdout, stderr)
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, ingestUsage)
		return errHelp
	}
	return fmt.Errorf("%w: ingest: unknown subcommand %q", errUsage, args[0])
}

// ingestGit runs one pass of bothy ingest git and prints its report.
func ingestGit(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var o wire.IngestGitOptions
	configPath, err := flags("ingest git", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&o.Repo, "repo", "", "path of the local clone (required)")
		fs.StringVar(&o.Channel, "channel", "", "id of the channel to write to (required)")
		fs.StringVar(&o.IssuesJSON, "issues-json", "", "issues in gh issue list --json format, instead of gh")
		fs.StringVar(&o.PRsJSON, "prs-json", "", "pull requests in gh pr list --json format, instead of gh")
		fs.IntVar(&o.MaxItems, "max-items", 0, "most creation attempts of the pass; 0 for no bound")
	})
	if err != nil {
		return err
	}
	switch {
	case o.Repo == "" || o.Channel == "":
		return fmt.Errorf("%w: ingest git: --repo and --channel are required", errUsage)
	case o.MaxItems < 0:
		return fmt.Errorf("%w: ingest git: --max-items must be 0 (no bound) or more", errUsage)
	}
	var bar *progressBar
	if isTerminal(stderr) {
		bar = &progressBar{w: stderr}
		o.Progress = bar.update
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		rep, err := app.IngestGit(ctx, o)
		bar.finish()
		if err != nil {
			return fail(ctx, logger, "ingest git", err)
		}
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
		if n := rep.Failed(); n > 0 {
			return fail(ctx, logger, "ingest git", fmt.Errorf("%d failures (see the report's warnings); the next pass retries them", n))
		}
		return nil
	})
}

// isTerminal reports whether w is a character device (a terminal), the one place a progress
// bar belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws one line on a terminal: the section, a bar and the counts. It redraws
// only when the line changes, and names nothing but sections and numbers.
type progressBar struct {
	w    io.Writer
	last string
}

// barWidth is the number of cells of the bar.
const barWidth = 30

// update redraws the bar for p.
func (b *progressBar) update(p wire.IngestProgress) {
	b.draw(string(p.Section), p.Done, p.Total)
}

// draw redraws the bar for done of total steps of section, when the line changed.
func (b *progressBar) draw(section string, done, total int) {
	line := progressLine(section, done, total)
	if line == b.last {
		return
	}
	b.last = line
	_, _ = io.WriteString(b.w, line)
}

// finish ends the bar's line; nothing for a nil bar.
func (b *progressBar) finish() {
	if b == nil || b.last == "" {
		return
	}
	_, _ = io.WriteString(b.w, "\n")
}
