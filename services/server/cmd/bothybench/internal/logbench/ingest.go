package logbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wire"
)

// IngestCommits is the default size of the ingest case's repository: spec 08's figure is the
// time of ingesting at least 5,000 commits.
const IngestCommits = 5000

// IngestResult is the ingest case (spec 08): one fresh pass of bothy ingest git over a
// generated repository, a second pass over the same repository (which creates nothing), and
// the bare append loop with the ingester's shape (1 writer, 1 event per transaction) measured
// in the same run.
type IngestResult struct {
	Commits int `json:"commits"`
	// GenerateSeconds is how long git fast-import took to write the repository.
	GenerateSeconds float64    `json:"generate_seconds"`
	Fresh           ingestPass `json:"fresh"`
	Second          ingestPass `json:"second"`
	// The baseline: the bare loop's events/s, half measured before the fresh pass and half
	// after it.
	BaselineEventsPerSecond float64 `json:"baseline_events_per_second"`
	BaselineTransactions    int64   `json:"baseline_transactions"`
	// Ratio is the fresh pass's events/s over the bare loop's.
	Ratio float64 `json:"ratio"`
}

// ingestPass is one pass of App.IngestGit.
type ingestPass struct {
	// Seconds is the wall-clock time of App.IngestGit; ReportElapsedMS the report's own
	// elapsed_ms (the pass without opening the sources).
	Seconds         float64 `json:"seconds"`
	ReportElapsedMS int64   `json:"report_elapsed_ms"`
	// UntilFirstSeconds is the time until the first commit was handled: the pass's set-up,
	// both git log walks, the parsing and masking of every commit, one key lookup, and that
	// first record; 0 when the pass walked no commit.
	UntilFirstSeconds float64 `json:"until_first_commit_seconds"`
	Created           int     `json:"records_created"`
	Skipped           int     `json:"records_skipped"`
	// Events is how far the head of the event log moved during the pass.
	Events           int64   `json:"events_appended"`
	RecordsPerSecond float64 `json:"records_per_second"`
	EventsPerSecond  float64 `json:"events_per_second"`
}

// ingestCase generates a repository of o.ingestCommits commits in a temporary directory,
// builds the demo world on app for a channel to write to (Demo bootstraps Alex when there is
// no owner, and finds him otherwise, so the case runs after those that bootstrap), and
// measures: the bare loop with 1 writer and 1 event per transaction for half of o.duration
// (after a warm-up of o.warmup), a fresh pass, the bare loop for the other half, and a second
// pass. Pull requests and issues come from empty JSON files, so gh is never asked.
func ingestCase(ctx context.Context, app *wire.App, bare *pgxpool.Pool, o bench.Options, progress func(string, ...any)) (res IngestResult, err error) {
	tmp, err := os.MkdirTemp("", "bothybench-ingest-")
	if err != nil {
		return res, fmt.Errorf("ingest: temp dir: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
	repo, empty := filepath.Join(tmp, "bench"), filepath.Join(tmp, "empty.json")
	if err := os.WriteFile(empty, []byte("[]\n"), 0o600); err != nil {
		return res, fmt.Errorf("ingest: %w", err)
	}
	progress("ingest: a repository of %d commits (git fast-import)", o.IngestCommits)
	began := time.Now()
	if err := generateRepo(ctx, repo, o.IngestCommits); err != nil {
		return res, err
	}
	res = IngestResult{Commits: o.IngestCommits, GenerateSeconds: bench.Round2(time.Since(began).Seconds())}
	world, err := app.Demo(ctx)
	if err != nil {
		return res, fmt.Errorf("ingest: %w", err)
	}
	if len(world.Spaces) == 0 || len(world.Spaces[0].Channels) == 0 {
		return res, errors.New("ingest: the demo world has no channel")
	}
	opts := wire.IngestGitOptions{Repo: repo, Channel: world.Spaces[0].Channels[0].ID.String(), PRsJSON: empty, IssuesJSON: empty}

	base := func(ctx context.Context, ev []kernel.Event) error { return bench.AppendBare(ctx, bare, ev) }
	if o.Warmup > 0 {
		if _, _, err := bench.Drive(ctx, 1, 1, o.Warmup, base); err != nil {
			return res, fmt.Errorf("ingest baseline warm-up: %w", err)
		}
	}
	var baseRate float64
	baseline := func() error {
		rate, n, err := bench.Drive(ctx, 1, 1, o.Duration/2, base)
		if err != nil {
			return fmt.Errorf("ingest baseline: %w", err)
		}
		baseRate += rate / 2
		res.BaselineTransactions += n
		return nil
	}
	progress("ingest: bare loop, 1 writer x 1 event/tx, first half")
	if err := baseline(); err != nil {
		return res, err
	}
	progress("ingest: fresh pass over %d commits", o.IngestCommits)
	if res.Fresh, err = measurePass(ctx, app, opts); err != nil {
		return res, err
	}
	progress("ingest: bare loop, second half")
	if err := baseline(); err != nil {
		return res, err
	}
	progress("ingest: second pass (nothing to create)")
	if res.Second, err = measurePass(ctx, app, opts); err != nil {
		return res, err
	}
	res.BaselineEventsPerSecond = bench.Round1(baseRate)
	res.Ratio = bench.Round2(res.Fresh.EventsPerSecond / baseRate)
	return res, nil
}

// measurePass runs one pass and times it; the events are the head of the log before and after
// (nothing else writes meanwhile). A record that failed fails the case.
func measurePass(ctx context.Context, app *wire.App, opts wire.IngestGitOptions) (ingestPass, error) {
	var p ingestPass
	before, err := app.Versions().EventSeq(ctx)
	if err != nil {
		return p, fmt.Errorf("ingest: event head: %w", err)
	}
	start := time.Now()
	var first time.Duration
	opts.Progress = func(pr wire.IngestProgress) {
		if pr.Section == ingest.SectionCommits && first == 0 {
			first = time.Since(start)
		}
	}
	rep, err := app.IngestGit(ctx, opts)
	elapsed := time.Since(start)
	if err != nil {
		return p, fmt.Errorf("ingest: pass: %w", err)
	}
	if rep.Failed() > 0 || !rep.Done {
		return p, fmt.Errorf("ingest: pass with %d failed records (done %v): %v", rep.Failed(), rep.Done, rep.Warnings)
	}
	after, err := app.Versions().EventSeq(ctx)
	if err != nil {
		return p, fmt.Errorf("ingest: event head: %w", err)
	}
	created := rep.PRs.Created + rep.Issues.Created + rep.Commits.Created
	return ingestPass{
		Seconds: bench.Round2(elapsed.Seconds()), ReportElapsedMS: rep.ElapsedMS, UntilFirstSeconds: bench.Round2(first.Seconds()),
		Created: created, Skipped: rep.PRs.Skipped + rep.Issues.Skipped + rep.Commits.Skipped, Events: after - before,
		RecordsPerSecond: bench.Round1(float64(created) / elapsed.Seconds()), EventsPerSecond: bench.Round1(float64(after-before) / elapsed.Seconds()),
	}, nil
}

// generateRepo makes a repository of n commits on main at dir with git init and git
// fast-import (no shell, no work tree checkout), with origin at example.com, so the pass
// names it alex/bench.
func generateRepo(ctx context.Context, dir string, n int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"remote", "add", "origin", "https://example.com/alex/bench.git"},
	} {
		if err := gitIn(ctx, dir, nil, args...); err != nil {
			return err
		}
	}
	return gitIn(ctx, dir, ingestStream(n), "fast-import", "--quiet")
}

// gitIn runs git with args in dir, with stdin as its input, and no configuration of the
// machine or the user.
func gitIn(ctx context.Context, dir string, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // git from PATH with this benchmark's fixed arguments, no shell.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ingest: git %s: %w: %s", args[0], err, out)
	}
	return nil
}

// ingestAuthors write the generated commits in turn.
var ingestAuthors = []struct{ name, email string }{
	{"Alex", "alex@example.com"}, {"Sam", "sam@example.com"}, {"Robin", "robin@example.com"},
}

// ingestAreas, ingestSubjects and ingestBodies make the generated messages: "area: subject",
// with a body of a few lines for two commits in three.
var (
	ingestAreas = []string{"chat", "sync", "gateway", "identity", "authz", "ingest", "web", "docs"}

	ingestSubjects = []string{
		"fix the seq gap after a rolled back post",
		"keep the resume token across restarts",
		"page the member list by handle",
		"refuse an empty title with a field error",
		"log the request id on every warning",
		"speed up the unread count query",
		"drop the unused cursor column",
		"read the permission version once per request",
		"retry a serialization failure once",
		"trim trailing spaces from display names",
		"document the catch-up limits",
		"cover archived channels in the tests",
		"move the clock behind a port",
		"batch the grant lookups of a scope build",
		"close idle connections on shutdown",
		"bound the size of a draft",
		"name the field in every validation problem",
		"split the snapshot into its parts",
		"rename the thread store methods",
		"add a test for mentions in edits",
		"stop the tail before the pool closes",
		"explain the admission limit in the ADR",
		"sort threads by their last message",
		"check the token prefix before the hash lookup",
		"raise the default page size to 500",
		"handle a cancelled context in the appender",
		"skip the NOTIFY when nothing was appended",
		"reject a channel name with a slash",
		"index messages by thread and seq",
		"show the unread badge after a reconnect",
		"fold the two migrations of the draft table",
		"remove the flaky sleep from the gateway test",
		"make the demo world idempotent",
		"count redacted events in the upkeep report",
		"parse the config once at start",
		"return 404 for a thread of another space",
		"keep the read state monotonic",
		"wrap the store errors with the use case",
		"guard the migration with an advisory lock",
		"clean up the fixture helpers",
	}

	ingestBodies = []string{
		"Sam saw the count jump by two after a post was rolled back. The seq is now taken\nunder the thread's row lock, after the checks, so a refused post leaves no gap.",
		"The old code read the setting on every call. It is read once when the App is wired\nand passed down, which also makes the tests independent of the environment.",
		"Robin hit this on a slow network: the client reconnected before the server had\nnoticed the old session. The new session now takes over the old one's cursor.",
		"Measured with make bench: about 8% fewer round trips per request on the\npostMessage case. No change to the API.",
		"The query planner picked a sequential scan once the table passed a million rows.\nThe new index covers the filter and the sort.",
		"Alex asked for this in review: the error names the field and never the value, as\nthe other handlers do.",
		"No behaviour change; this only moves code so the next change is smaller.",
	}

	// ingestFiles are the files the commits change, one to three each.
	ingestFiles = []string{
		"services/server/internal/chat/app/messages.go",
		"services/server/internal/chat/adapters/postgres/store.go",
		"services/server/internal/sync/app/catchup.go",
		"services/server/internal/gateway/session.go",
		"services/server/internal/identity/app/tokens.go",
		"services/server/internal/authz/scope.go",
		"services/server/internal/ingest/app/pass.go",
		"services/server/internal/wire/wire.go",
		"web/src/threads/ThreadList.tsx",
		"web/src/api/client.ts",
		"docs/spec/05-sync.md",
		"README.md",
	}
)

// ingestMessage is the message of the generated commit i (from 0): a subject, and for two
// commits in three a body.
func ingestMessage(i int) string {
	subject := ingestAreas[i%len(ingestAreas)] + ": " + ingestSubjects[(i/len(ingestAreas)+i)%len(ingestSubjects)]
	if i%3 == 0 {
		return subject + "\n"
	}
	return subject + "\n\n" + ingestBodies[(i/3)%len(ingestBodies)] + "\n"
}

// ingestStream is the git fast-import stream of n commits on refs/heads/main, one every 41
// minutes from 2024-01-08 by Alex, Sam and Robin in turn, each changing one to three small
// files.
func ingestStream(n int) []byte {
	var b bytes.Buffer
	start := time.Date(2024, 1, 8, 9, 0, 0, 0, time.UTC)
	for i := range n {
		who := ingestAuthors[i%len(ingestAuthors)]
		when := start.Add(time.Duration(i) * 41 * time.Minute).Unix()
		msg := ingestMessage(i)
		fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\n", i+1)
		fmt.Fprintf(&b, "author %s <%s> %d +0000\ncommitter %s <%s> %d +0000\n", who.name, who.email, when, who.name, who.email, when)
		fmt.Fprintf(&b, "data %d\n%s\n", len(msg), msg)
		if i > 0 {
			fmt.Fprintf(&b, "from :%d\n", i)
		}
		for j := range 1 + i%3 {
			path := ingestFiles[(i*5+j*7)%len(ingestFiles)]
			content := fmt.Sprintf("// %s, revision %d by %s\n", path, i+1, who.name)
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// Markdown renders the ingest section of docs/benchmarks.md through w.
func (in IngestResult) Markdown(w func(format string, args ...any)) {
	f, s := in.Fresh, in.Second
	w("\n## Ingest (bothy ingest git)\n\n")
	w("Figure: one pass of `bothy ingest git` (`App.IngestGit`, spec 08) over a repository of %d\n", in.Commits)
	w("commits generated for the run with `git fast-import` (generated in %.2f s): one branch, messages\n", in.GenerateSeconds)
	w("of a subject and, for two commits in three, a body of two lines, by Alex, Sam and Robin in\n")
	w("turn, each commit changing one to three small files. Pull requests and issues come from\n")
	w("empty JSON files, so gh is not asked; every commit becomes a message of the branch's thread.\n")
	w("The pass reads the history with two `git log` walks (the messages, then `--name-only`),\n")
	w("parses and masks every commit and looks up every key in one query; then it writes one record\n")
	w("per transaction, serially, through the chat use case, as the app principal `@git-ingest`. A\n")
	w("record costs the thread's read, authorization (`message.create`, with the permission_version\n")
	w("read that proves the cached Scope current), the per-thread seq UPDATE, the message INSERT,\n")
	w("the `ingest.records` row, and the event append with its final round trip (the event_seq\n")
	w("counter UPDATE, the event INSERT, the NOTIFY and the COMMIT, ADR 0014), whose durable commit\n")
	w("(fsync) the pass waits for before the next record. Events are counted as the head of the\n")
	w("log before and after the pass: a `message.created` per commit, the branch's thread, and the\n")
	w("app principal and its grant, which the first pass creates. The second pass over the same\n")
	w("repository starts from the commits cursor the first stored (HEAD), so `git log` walks nothing\n")
	w("and the pass creates and skips nothing: its time is the pass's set-up and one empty walk.\n")
	w("Baseline: the bare append loop of the append table with 1 writer and 1 event per transaction,\n")
	w("the ingester's shape (one writer, one record per transaction, each commit waited for), for\n")
	w("half the case's time before the fresh pass and half after it. The ratio is events/s over the\n")
	w("bare loop's events/s; higher is better. Spec 08 sets no target.\n\n")
	w("| pass | commits | records created | records skipped | events appended | time | records/s | events/s | bare loop events/s | ratio |\n")
	w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| fresh | %d | %d | %d | %d | %.2f s | %.0f | %.0f | %.0f | %.2f |\n",
		in.Commits, f.Created, f.Skipped, f.Events, f.Seconds, f.RecordsPerSecond, f.EventsPerSecond, in.BaselineEventsPerSecond, in.Ratio)
	w("| second (nothing to create) | %d | %d | %d | %d | %.2f s | | | | |\n", in.Commits, s.Created, s.Skipped, s.Events, s.Seconds)
	w("\nThe set-up, both `git log` walks, the parsing and masking and the key lookup, until the first\n")
	w("commit was written, took %.2f s of the fresh pass;\nthe rest is the %d transactions", f.UntilFirstSeconds, f.Created)
	if writing := f.Seconds - f.UntilFirstSeconds; writing > 0 {
		w(", %.0f records/s", float64(f.Created)/writing)
	}
	w(".\n")
}
