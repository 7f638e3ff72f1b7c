package operations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/e2e/e2etest"
	ingestapp "bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/ingesttest"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// The integration tests of bothy ingest git (spec 08): real PostgreSQL, real git on a
// repository made in t.TempDir, the JSON-file sources, and Alex catching up through
// GET /api/v1/events over real HTTP with the validating client.

// newIngestRepo is a scratch repository (ingesttest.Repo) whose origin is on example.com.
func newIngestRepo(t *testing.T) *ingesttest.Repo {
	t.Helper()
	r := ingesttest.NewRepo(t)
	r.Git("remote", "add", "origin", "https://example.com/alex/bothy.git")
	return r
}

// writeIngestJSON writes v as a JSON file in t.TempDir and returns its path.
func writeIngestJSON(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ingestWorld is Alex, Sam and Robin, a space Dev with the channel git, Sam a member of it.
func ingestWorld(t *testing.T, opts ...wiretest.Option) (*e2etest.ChatWorld, uuid.UUID) {
	t.Helper()
	w := e2etest.NewPeople(t, false, opts...)
	space := w.Space(t, "Dev")
	channel := w.Channel(t, w.Alex, space, "git")
	w.Grant(t, w.Sam, "channel", channel, "member")
	return w, channel
}

// ingestGHPR and ingestGHIssue are gh's --json objects, for the JSON files.
type ingestGHPR struct {
	Number      int                 `json:"number"`
	Title       string              `json:"title"`
	Body        string              `json:"body"`
	Author      map[string]string   `json:"author"`
	State       string              `json:"state"`
	CreatedAt   string              `json:"createdAt"`
	UpdatedAt   string              `json:"updatedAt"`
	MergedAt    string              `json:"mergedAt,omitempty"`
	HeadRefName string              `json:"headRefName"`
	BaseRefName string              `json:"baseRefName"`
	MergeCommit map[string]string   `json:"mergeCommit,omitempty"`
	URL         string              `json:"url"`
	Labels      []map[string]string `json:"labels"`
}

type ingestGHIssue struct {
	Number      int                 `json:"number"`
	Title       string              `json:"title"`
	Body        string              `json:"body"`
	Author      map[string]string   `json:"author"`
	State       string              `json:"state"`
	StateReason string              `json:"stateReason"`
	UpdatedAt   string              `json:"updatedAt"`
	URL         string              `json:"url"`
	Labels      []map[string]string `json:"labels"`
}

// TestIngestGitEndToEnd ingests a repository's history with pull requests and issues from
// JSON files into a channel: one message per commit, a thread per pull request and issue,
// merge commits in their pull request's thread, every event written by the app @git-ingest,
// and Alex catches all of it up through GET /api/v1/events. Credential-shaped strings in every
// free-text field of commits, issues and pull requests reach no message, no title, no event,
// no log line and not the report. A second pass writes nothing.
func TestIngestGitEndToEnd(t *testing.T) {
	t.Parallel()
	var logs ingestLogs
	w, channel := ingestWorld(t, wiretest.WithLogCopy(&logs))
	secret := ingesttest.All()
	r := newIngestRepo(t)
	first := r.Commit("Initial commit\n\nSet up the repository. "+secret, "README.md", "bothy")
	r.Commit("Add the ingester, cc @sam\n\nPart of #1. "+secret, "ingest.go", "package ingest")
	r.Git("checkout", "-q", "-b", "docs")
	r.Commit("Write the docs "+ingesttest.Secrets()[0].Value, "docs.md", "docs")
	r.Git("checkout", "-q", "main")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "-m", "Merge pull request #2 from sam/docs", "docs")
	merge := r.Git("rev-parse", "HEAD")
	squash := r.Commit("Speed up catch-up (#3)", "catchup.go", "package catchup")
	commits, _ := strconv.Atoi(r.Git("rev-list", "--count", "HEAD"))

	author := map[string]string{"login": "sam"}
	prs := writeIngestJSON(t, "prs.json", []ingestGHPR{
		{Number: 2, Title: "Docs " + secret, Body: "Docs for " + first[:7] + ". " + secret, Author: map[string]string{"login": secret},
			State: "MERGED", CreatedAt: "2026-01-02T00:00:00Z", UpdatedAt: "2026-01-03T00:00:00Z", MergedAt: secret,
			HeadRefName: "docs " + secret, BaseRefName: "main", URL: "https://example.com/alex/bothy/pull/2?" + secret,
			Labels: []map[string]string{{"name": secret}}},
		{Number: 3, Title: "Speed up catch-up", Body: "Squashed.", Author: author, State: "MERGED",
			CreatedAt: "2026-01-04T00:00:00Z", UpdatedAt: "2026-01-05T00:00:00Z", HeadRefName: "catchup", BaseRefName: "main",
			MergeCommit: map[string]string{"oid": squash}, URL: "https://example.com/alex/bothy/pull/3", Labels: []map[string]string{}},
	})
	issues := writeIngestJSON(t, "issues.json", []ingestGHIssue{
		{Number: 1, Title: "Ingest git history " + secret, Body: secret, Author: map[string]string{"login": secret}, State: "OPEN",
			StateReason: secret, UpdatedAt: "2026-01-01T00:00:00Z", URL: secret, Labels: []map[string]string{{"name": "ingest"}}},
	})

	head := w.Head(t)
	rep, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), PRsJSON: prs, IssuesJSON: issues})
	if err != nil {
		t.Fatalf("IngestGit: %v", err)
	}
	if rep.Repository != "alex/bothy" || rep.Branch != "main" || rep.Commits.Created != commits || rep.PRs.Created != 2 ||
		rep.Issues.Created != 1 || rep.Failed() != 0 || !rep.Done || rep.Commits.Source != "git" || rep.PRs.Source != "file" {
		t.Fatalf("report = %+v", rep)
	}

	// Alex catches up through the API.
	events := w.IngestCatchUp(t, w.Alex, head)
	var app uuid.UUID
	created := map[string]int{}
	commitMessages := 0
	threads := map[uuid.UUID]bool{}
	for _, e := range events {
		if leaks := ingesttest.Leaks(e.Raw); len(leaks) > 0 {
			t.Errorf("event %d %s holds %v: %s", e.Seq, e.Type, leaks, e.Raw)
		}
		created[e.Type]++
		if e.Type == "grant.created" || e.Type == "permissions.changed" {
			continue // personal events of the app's grant are not Alex's
		}
		if e.Actor.Handle != ingestapp.PrincipalHandle || e.Actor.Kind != "app" || e.ChannelID != channel {
			t.Errorf("event %d %s by %+v in %s, want by @%s in the channel", e.Seq, e.Type, e.Actor, e.ChannelID, ingestapp.PrincipalHandle)
		}
		app = e.Actor.ID
		var p struct {
			ContentMD  string      `json:"content_md"`
			MentionIDs []uuid.UUID `json:"mention_ids"`
			Title      string      `json:"title"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatalf("payload of %s: %v", e.Type, err)
		}
		if e.Type == "message.created" && strings.HasPrefix(p.ContentMD, "**Commit ") {
			commitMessages++
			threads[e.ThreadID] = true
		}
		if len(p.MentionIDs) != 0 {
			t.Errorf("event %d mentions %v: an imported @login must not mention anyone", e.Seq, p.MentionIDs)
		}
	}
	if commitMessages != commits || created["thread.created"] != 4 || created["message.created"] != commits+3+1 {
		// Threads: two pull requests, one issue, the branch. Messages: every commit, the three
		// first messages, and the reply of pull request #2 naming a commit written after it.
		t.Fatalf("Alex caught up %v with %d commit messages; want one message per commit (%d)", created, commitMessages, commits)
	}
	if app == uuid.Nil || len(threads) != 3 {
		t.Fatalf("commits spread over %d threads, want 3 (branch, #2, #3)", len(threads))
	}

	// The messages, as Alex lists them: the merge commit in #2's thread, the squash in #3's.
	for _, c := range []struct {
		sha string
		pr  int
	}{{merge, 2}, {squash, 3}} {
		msgs := w.IngestThreadOf(t, rep.Repository, c.pr)
		if !strings.Contains(w.IngestContent(t, msgs), "Commit id: "+c.sha) {
			t.Errorf("the thread of #%d lacks its merge commit %s", c.pr, c.sha[:7])
		}
	}
	for _, th := range w.IngestThreads(t, events) {
		content := w.IngestContent(t, th)
		if leaks := ingesttest.Leaks(content); len(leaks) > 0 {
			t.Errorf("listMessages holds %v", leaks)
		}
	}
	if !strings.Contains(w.IngestContent(t, w.IngestThreadOf(t, rep.Repository, 2)), "Docs for "+first[:7]) {
		t.Error("pull request #2 lost its text")
	}
	report, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if leaks := ingesttest.Leaks(string(report)); len(leaks) > 0 {
		t.Errorf("the report holds %v: %s", leaks, report)
	}
	if leaks := ingesttest.Leaks(logs.String()); len(leaks) > 0 {
		t.Errorf("the log holds %v", leaks)
	}
	if !strings.Contains(logs.String(), `"msg":"ingest pass"`) {
		t.Errorf("no log line of the pass")
	}

	// A second pass creates nothing and appends no event.
	head = w.Head(t)
	again, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), PRsJSON: prs, IssuesJSON: issues})
	if err != nil {
		t.Fatalf("second IngestGit: %v", err)
	}
	if again.PRs.Created+again.Issues.Created+again.Commits.Created != 0 || again.Budget.Used != 0 || !again.Done || w.Head(t) != head {
		t.Fatalf("second pass = %+v, head %d -> %d", again, head, w.Head(t))
	}
	// A new commit later is the only record of the next pass.
	r.Commit("One more", "more.go", "package more")
	third, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), PRsJSON: prs, IssuesJSON: issues})
	if err != nil || third.Commits.Created != 1 || third.Budget.Used != 1 {
		t.Fatalf("third pass = %+v, %v", third, err)
	}
}

// TestIngestGitBudget: --max-items 3 creates three records and reports done false; the next
// passes continue where the last stopped until the history is in.
func TestIngestGitBudget(t *testing.T) {
	t.Parallel()
	w, channel := ingestWorld(t)
	r := newIngestRepo(t)
	for i := range 7 {
		r.Commit(fmt.Sprintf("Commit %d", i+1), fmt.Sprintf("f%d", i), "x")
	}
	opts := wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), MaxItems: 3, GH: noGH()}
	head := w.Head(t)
	rep, err := w.Env.App.IngestGit(t.Context(), opts)
	if err != nil || rep.Commits.Created != 3 || rep.Done || rep.Budget.Used != 3 || rep.Budget.MaxItems != 3 {
		t.Fatalf("first pass = %+v, %v", rep, err)
	}
	if got := len(w.IngestCatchUp(t, w.Alex, head)); got != 4 { // thread.created and three message.created
		t.Fatalf("the first pass appended %d events Alex sees, want 4", got)
	}
	passes, total := 1, 3
	for !rep.Done {
		if rep, err = w.Env.App.IngestGit(t.Context(), opts); err != nil || rep.Budget.Used > 3 {
			t.Fatalf("pass %d = %+v, %v", passes+1, rep, err)
		}
		passes++
		total += rep.Commits.Created
	}
	if passes != 3 || total != 7 {
		t.Fatalf("%d passes created %d commits, want 3 passes and 7", passes, total)
	}
	events := w.IngestCatchUp(t, w.Alex, head)
	var seqs []string
	for _, e := range events {
		var p struct {
			ContentMD string `json:"content_md"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		if e.Type == "message.created" {
			seqs = append(seqs, strings.SplitN(p.ContentMD, "\n", 2)[0])
		}
	}
	for i, s := range seqs {
		if !strings.HasSuffix(s, fmt.Sprintf(": Commit %d", i+1)) {
			t.Fatalf("message %d is %q: the passes did not continue in order", i+1, s)
		}
	}
}

// TestIngestGitFailureStallsAndIsRetried: a pull request too large for chat.max_message_bytes
// fails, the pull request after it is still written, the cursor stays before the failure and
// the pass reports it; with the limit raised, the next pass writes it and skips the rest.
func TestIngestGitFailureStallsAndIsRetried(t *testing.T) {
	t.Parallel()
	w, channel := ingestWorld(t, wiretest.WithSetting(chatapp.KeyMaxMessageBytes, "2000"))
	r := newIngestRepo(t)
	r.Commit("First", "a", "a")
	prs := writeIngestJSON(t, "prs.json", []ingestGHPR{
		{Number: 1, Title: "Small", Body: "ok", State: "OPEN", UpdatedAt: "2026-01-01T00:00:00Z", Author: map[string]string{"login": "alex"}},
		{Number: 2, Title: "Large", Body: strings.Repeat("long text ", 400), State: "OPEN", UpdatedAt: "2026-01-02T00:00:00Z"},
		{Number: 3, Title: "Small too", Body: "ok", State: "OPEN", UpdatedAt: "2026-01-03T00:00:00Z"},
	})
	opts := wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), PRsJSON: prs, GH: noGH()}
	rep, err := w.Env.App.IngestGit(t.Context(), opts)
	if err != nil {
		t.Fatalf("IngestGit: %v", err)
	}
	if rep.PRs.Created != 2 || rep.PRs.Failed != 1 || rep.Failed() != 1 || rep.PRs.Cursor != "2026-01-01T00:00:00Z" || rep.Commits.Created != 1 {
		t.Fatalf("first pass = %+v", rep)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "prs: pull request #2 not created: ") || !strings.Contains(w, "content_md: must be at most 2000 bytes") {
		t.Fatalf("warnings = %q", rep.Warnings)
	}

	// The same database, served with the default limit.
	raised := wiretest.New(t, wiretest.WithDatabaseURL(w.Env.DatabaseURL))
	rep, err = raised.App.IngestGit(t.Context(), opts)
	if err != nil {
		t.Fatalf("IngestGit with the limit raised: %v", err)
	}
	if rep.PRs.Created != 1 || rep.PRs.Skipped != 2 || rep.Failed() != 0 || rep.PRs.Cursor != "2026-01-03T00:00:00Z" || rep.Budget.Used != 1 {
		t.Fatalf("second pass = %+v", rep)
	}
}

// TestIngestGitOwnHistory ingests the history of the repository these tests live in, when
// they run in a git work tree with commits; elsewhere (an exported source tree) a repository
// made here stands in, so the test never skips. One message per commit, and Alex catches
// them up.
func TestIngestGitOwnHistory(t *testing.T) {
	t.Parallel()
	w, channel := ingestWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dir := ""
	if out, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output(); err == nil {
		dir = strings.TrimSpace(string(out))
		if err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Run(); err != nil {
			dir = ""
		}
	}
	if dir == "" {
		r := newIngestRepo(t)
		for i := range 3 {
			r.Commit(fmt.Sprintf("Commit %d", i), fmt.Sprintf("f%d", i), "x")
		}
		dir = r.Dir
	}
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-list: %v", err)
	}
	commits, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	head := w.Head(t)
	// The gh of this machine, if any, must not be asked: both sections get an empty file.
	empty := writeIngestJSON(t, "empty.json", []ingestGHPR{})
	rep, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: dir, Channel: channel.String(), PRsJSON: empty, IssuesJSON: empty})
	if err != nil {
		t.Fatalf("IngestGit of %s: %v", dir, err)
	}
	if rep.Commits.Created != commits || rep.Failed() != 0 || !rep.Done {
		t.Fatalf("report = %+v, want %d commits", rep, commits)
	}
	n := 0
	for _, e := range w.IngestCatchUp(t, w.Alex, head) {
		if e.Type == "message.created" {
			n++
		}
	}
	if n != commits {
		t.Fatalf("Alex caught up %d messages, want one per commit (%d)", n, commits)
	}
}

// TestIngestGitThroughGH reads pull requests and issues through a gh that answers like the
// real one, and checks what the pass asked it.
func TestIngestGitThroughGH(t *testing.T) {
	t.Parallel()
	w, channel := ingestWorld(t)
	r := newIngestRepo(t)
	r.Commit("First", "a", "a")
	gh := &ingestFakeGH{answers: map[string]string{
		"auth status": "",
		"pr list":     `[{"number":7,"title":"From gh","body":"","author":{"login":"robin"},"state":"OPEN","updatedAt":"2026-01-01T00:00:00Z"}]`,
		"issue list":  `[]`,
	}}
	rep, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), GH: gh})
	if err != nil || rep.PRs.Source != "gh" || rep.Issues.Source != "gh" || rep.PRs.Created != 1 || !rep.Done {
		t.Fatalf("pass = %+v, %v", rep, err)
	}
	// The next pass asks gh from the cursor, inclusive.
	if _, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), GH: gh}); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	last := gh.calls[len(gh.calls)-2]
	if got := last[len(last)-1]; got != "sort:updated-asc updated:>=2026-01-01T00:00:00+00:00" || last[0] != "pr" {
		t.Fatalf("gh was asked %q", last)
	}
}

// noGH is a gh that is not logged in: a section without a JSON file has no source, whatever
// this machine has installed.
func noGH() *ingestFakeGH { return &ingestFakeGH{answers: map[string]string{}} }

// ingestFakeGH answers gh commands by their first two arguments.
type ingestFakeGH struct {
	mu      sync.Mutex
	answers map[string]string
	calls   [][]string
}

func (f *ingestFakeGH) Run(_ context.Context, _ string, args ...string) ([]byte, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, args)
	out, ok := f.answers[strings.Join(args[:2], " ")]
	if !ok {
		return nil, []byte("unknown command"), errors.New("exit status 1")
	}
	return []byte(out), nil, nil
}

// TestIngestGitRefuses: a bad channel or repository is refused before anything is written; a
// repository stays in the channel of its first pass.
func TestIngestGitRefuses(t *testing.T) {
	t.Parallel()
	w, channel := ingestWorld(t)
	r := newIngestRepo(t)
	r.Commit("First", "a", "a")
	other := w.Channel(t, w.Alex, w.Space(t, "Other"), "elsewhere")
	tests := []struct {
		name string
		opts wire.IngestGitOptions
		kind error
		want string
	}{
		{"a channel that is no id", wire.IngestGitOptions{Repo: r.Dir, Channel: "git", GH: noGH()}, problem.ErrValidation, "channel"},
		{"no repository", wire.IngestGitOptions{Repo: filepath.Join(r.Dir, "missing"), Channel: channel.String(), GH: noGH()}, problem.ErrValidation, "repo"},
		{"an unknown channel", wire.IngestGitOptions{Repo: r.Dir, Channel: uuid.NewString(), GH: noGH()}, problem.ErrNotFound, "channel"},
	}
	for _, tc := range tests {
		head := w.Head(t)
		if _, err := w.Env.App.IngestGit(t.Context(), tc.opts); !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: IngestGit = %v, want %v naming %s", tc.name, err, tc.kind, tc.want)
		}
		if w.Head(t) != head {
			t.Errorf("%s: a refused pass appended events", tc.name)
		}
	}
	empty := writeIngestJSON(t, "empty.json", []ingestGHPR{})
	if _, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: channel.String(), PRsJSON: empty, IssuesJSON: empty}); err != nil {
		t.Fatalf("IngestGit: %v", err)
	}
	_, err := w.Env.App.IngestGit(t.Context(), wire.IngestGitOptions{Repo: r.Dir, Channel: other.String(), PRsJSON: empty, IssuesJSON: empty})
	if !errors.Is(err, problem.ErrConflict) || !strings.Contains(err.Error(), "alex/bothy is ingested into channel "+channel.String()) {
		t.Fatalf("IngestGit into another channel = %v", err)
	}
}

// ingestLogs is a bytes.Buffer safe for the App's concurrent log lines.
type ingestLogs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *ingestLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *ingestLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
