package gh_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/adapters/gh"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// fakeRunner answers gh commands from a table and records every call.
type fakeRunner struct {
	mu      sync.Mutex
	calls   [][]string
	dirs    []string
	answers map[string]answer // by the first two arguments
}

type answer struct {
	stdout, stderr string
	err            error
}

func (f *fakeRunner) Run(_ context.Context, dir string, args ...string) ([]byte, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, args)
	f.dirs = append(f.dirs, dir)
	a, ok := f.answers[strings.Join(args[:2], " ")]
	if !ok {
		return nil, []byte("unknown command"), errors.New("exit status 1")
	}
	return []byte(a.stdout), []byte(a.stderr), a.err
}

const prJSON = `[
 {"number":12,"title":"Add the ingester","body":"Closes #3","author":{"id":"x","is_bot":false,"login":"alex","name":"Alex"},
  "state":"MERGED","createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-03T03:04:05Z","closedAt":"2026-01-03T03:04:05Z",
  "mergedAt":"2026-01-03T03:04:05Z","headRefName":"ingest","baseRefName":"main",
  "mergeCommit":{"oid":"0123456789abcdef0123456789abcdef01234567"},"url":"https://example.com/alex/bothy/pull/12",
  "labels":[{"id":"l","name":"feature","description":"","color":"0e8a16"}]},
 {"number":"thirteen"},
 {"number":14,"title":"Draft","body":"","author":null,"state":"OPEN","createdAt":"2026-01-04T00:00:00Z",
  "updatedAt":"2026-01-04T00:00:00Z","closedAt":null,"mergedAt":null,"headRefName":"x","baseRefName":"main","mergeCommit":null,
  "url":"https://example.com/alex/bothy/pull/14","labels":[]}
]`

const issueJSON = `[
 {"number":3,"title":"Crash","body":"Stack trace","author":{"login":"sam"},"state":"CLOSED","stateReason":"COMPLETED",
  "createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-02T00:00:00Z","closedAt":"2026-01-02T00:00:00Z",
  "url":"https://example.com/alex/bothy/issues/3","labels":[{"name":"bug"},{"name":"p1"}]},
 {"number":4,"title":"Idea","author":{"login":"robin"},"state":"OPEN","stateReason":"","updatedAt":"2026-01-05T00:00:00Z"},
 42
]`

var (
	wantPRs = []domain.RawPR{
		{Number: 12, Title: "Add the ingester", Body: "Closes #3", Author: "alex", State: "MERGED", CreatedAt: "2026-01-02T03:04:05Z",
			UpdatedAt: "2026-01-03T03:04:05Z", ClosedAt: "2026-01-03T03:04:05Z", MergedAt: "2026-01-03T03:04:05Z", HeadRef: "ingest",
			BaseRef: "main", MergeCommit: "0123456789abcdef0123456789abcdef01234567", URL: "https://example.com/alex/bothy/pull/12", Labels: []string{"feature"}},
		{Number: 14, Title: "Draft", State: "OPEN", CreatedAt: "2026-01-04T00:00:00Z", UpdatedAt: "2026-01-04T00:00:00Z",
			HeadRef: "x", BaseRef: "main", URL: "https://example.com/alex/bothy/pull/14"},
	}
	wantIssues = []domain.RawIssue{
		{Number: 3, Title: "Crash", Body: "Stack trace", Author: "sam", State: "CLOSED", StateReason: "COMPLETED", CreatedAt: "2026-01-01T00:00:00Z",
			UpdatedAt: "2026-01-02T00:00:00Z", ClosedAt: "2026-01-02T00:00:00Z", URL: "https://example.com/alex/bothy/issues/3", Labels: []string{"bug", "p1"}},
		{Number: 4, Title: "Idea", Author: "robin", State: "OPEN", UpdatedAt: "2026-01-05T00:00:00Z"},
	}
)

func TestArgs(t *testing.T) {
	t.Parallel()
	floor := time.Date(2026, 1, 2, 3, 4, 5, 999, time.FixedZone("x", 3600))
	if got := gh.Search(time.Time{}); got != "sort:updated-asc" {
		t.Errorf("Search(zero) = %q", got)
	}
	if got := gh.Search(floor); got != "sort:updated-asc updated:>=2026-01-02T02:04:05+00:00" {
		t.Errorf("Search(floor) = %q", got)
	}
	want := []string{"pr", "list", "--state", "all", "--limit", "1000", "--json", gh.PRFields, "--search", "sort:updated-asc updated:>=2026-01-02T02:04:05+00:00"}
	if got := gh.Args("pr", floor, 1000); !slices.Equal(got, want) {
		t.Errorf("Args(pr) = %q, want %q", got, want)
	}
	want = []string{"issue", "list", "--state", "all", "--limit", "7", "--json", gh.IssueFields, "--search", "sort:updated-asc"}
	if got := gh.Args("issue", time.Time{}, 7); !slices.Equal(got, want) {
		t.Errorf("Args(issue) = %q, want %q", got, want)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	r := &fakeRunner{answers: map[string]answer{"pr list": {stdout: prJSON}, "issue list": {stdout: issueJSON}}}
	cli := gh.NewCLI(r, "/src/bothy", domain.GHSearchMax, ingesttest.Masker())
	floor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prs, err := cli.PullRequests(t.Context(), floor)
	if err != nil {
		t.Fatalf("PullRequests: %v", err)
	}
	if !reflect.DeepEqual(prs.Items, wantPRs) || prs.Unreadable != 1 || prs.Full {
		t.Fatalf("PullRequests =\n %+v\nwant\n %+v", prs, wantPRs)
	}
	issues, err := cli.Issues(t.Context(), time.Time{})
	if err != nil {
		t.Fatalf("Issues: %v", err)
	}
	if !reflect.DeepEqual(issues.Items, wantIssues) || issues.Unreadable != 1 || issues.Full {
		t.Fatalf("Issues =\n %+v\nwant\n %+v", issues, wantIssues)
	}
	if cli.Name() != "gh" {
		t.Errorf("Name = %q", cli.Name())
	}
	wantCalls := [][]string{gh.Args("pr", floor, domain.GHSearchMax), gh.Args("issue", time.Time{}, domain.GHSearchMax)}
	if !reflect.DeepEqual(r.calls, wantCalls) || !slices.Equal(r.dirs, []string{"/src/bothy", "/src/bothy"}) {
		t.Fatalf("calls = %q in %q", r.calls, r.dirs)
	}
}

func TestCLIFullPage(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[")
	for i := range domain.GHSearchMax {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"number":%d,"updatedAt":"2026-01-01T00:00:00Z"}`, i+1)
	}
	b.WriteString("]")
	r := &fakeRunner{answers: map[string]answer{"pr list": {stdout: b.String()}, "issue list": {stdout: b.String()}}}
	prs, err := gh.NewCLI(r, ".", domain.GHSearchMax, ingesttest.Masker()).PullRequests(t.Context(), time.Time{})
	if err != nil || !prs.Full || len(prs.Items) != domain.GHSearchMax {
		t.Fatalf("a page of %d: full %v, %d items, %v", domain.GHSearchMax, prs.Full, len(prs.Items), err)
	}
	issues, err := gh.NewCLI(r, ".", domain.GHSearchMax, ingesttest.Masker()).Issues(t.Context(), time.Time{})
	if err != nil || !issues.Full {
		t.Fatalf("a page of issues: full %v, %v", issues.Full, err)
	}
}

func TestCLIFailures(t *testing.T) {
	t.Parallel()
	secret := ingesttest.Secrets()[1].Value
	r := &fakeRunner{answers: map[string]answer{
		"pr list":    {stderr: "HTTP 401: Bad credentials (token " + secret + ")", err: errors.New("exit status 1")},
		"issue list": {stdout: `{"message":"not an array"}`},
	}}
	cli := gh.NewCLI(r, ".", domain.GHSearchMax, ingesttest.Masker())
	_, err := cli.PullRequests(t.Context(), time.Time{})
	if err == nil || !strings.Contains(err.Error(), "gh pr list: exit status 1: HTTP 401: Bad credentials") || len(ingesttest.Leaks(err.Error())) > 0 {
		t.Fatalf("PullRequests = %v", err)
	}
	_, err = cli.Issues(t.Context(), time.Time{})
	if err == nil || !strings.Contains(err.Error(), "gh issue list: the output is not a JSON array") {
		t.Fatalf("Issues = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r2 := &fakeRunner{answers: map[string]answer{"pr list": {err: errors.New("signal: killed")}}}
	if _, err := gh.NewCLI(r2, ".", domain.GHSearchMax, ingesttest.Masker()).PullRequests(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("PullRequests with a cancelled context = %v", err)
	}
}

func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prPath, issuePath := filepath.Join(dir, "prs.json"), filepath.Join(dir, "issues.json")
	if err := os.WriteFile(prPath, []byte(prJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(issuePath, []byte(issueJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	prs, err := gh.NewFile(prPath).PullRequests(t.Context(), time.Now())
	if err != nil || !reflect.DeepEqual(prs.Items, wantPRs) || prs.Full || prs.Unreadable != 1 {
		t.Fatalf("File.PullRequests = %+v, %v", prs, err)
	}
	issues, err := gh.NewFile(issuePath).Issues(t.Context(), time.Now())
	if err != nil || !reflect.DeepEqual(issues.Items, wantIssues) || issues.Full {
		t.Fatalf("File.Issues = %+v, %v", issues, err)
	}
	if gh.NewFile(prPath).Name() != "file" {
		t.Fatal("Name is not file")
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := gh.NewFile(missing).PullRequests(t.Context(), time.Time{}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("a missing file = %v", err)
	}
	if _, err := gh.NewFile(missing).Issues(t.Context(), time.Time{}); err == nil {
		t.Fatal("a missing issues file succeeded")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json "+ingesttest.Secrets()[0].Value), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fetch := range []func() error{
		func() error { _, err := gh.NewFile(bad).PullRequests(t.Context(), time.Time{}); return err },
		func() error { _, err := gh.NewFile(bad).Issues(t.Context(), time.Time{}); return err },
	} {
		if err := fetch(); err == nil || !strings.Contains(err.Error(), "not a JSON array") || len(ingesttest.Leaks(err.Error())) > 0 {
			t.Fatalf("a file that is not JSON = %v", err)
		}
	}
}

func TestChoose(t *testing.T) {
	t.Parallel()
	authed := &fakeRunner{answers: map[string]answer{"auth status": {}}}
	anonymous := &fakeRunner{answers: map[string]answer{"auth status": {stderr: "You are not logged in", err: errors.New("exit status 1")}}}
	tests := []struct {
		name             string
		choice           gh.Choice
		wantPRs, wantIss string
		authChecks       int
	}{
		{"both files", gh.Choice{PRsJSON: "p.json", IssuesJSON: "i.json", Runner: authed}, "file", "file", 0},
		{"gh for what has no file", gh.Choice{PRsJSON: "p.json", Runner: authed}, "file", "gh", 1},
		{"gh for both", gh.Choice{Runner: authed}, "gh", "gh", 1},
		{"gh not logged in", gh.Choice{IssuesJSON: "i.json", Runner: anonymous}, "none", "file", 1},
	}
	for _, tc := range tests {
		before := len(authed.calls) + len(anonymous.calls)
		prs, issues := gh.Choose(t.Context(), tc.choice)
		var prName, issueName string
		if prs == nil {
			prName = "none"
		} else {
			prName = prs.Name()
		}
		if issues == nil {
			issueName = "none"
		} else {
			issueName = issues.Name()
		}
		if prName != tc.wantPRs || issueName != tc.wantIss {
			t.Errorf("%s: sources %s and %s, want %s and %s", tc.name, prName, issueName, tc.wantPRs, tc.wantIss)
		}
		if got := len(authed.calls) + len(anonymous.calls) - before; got != tc.authChecks {
			t.Errorf("%s: %d auth checks, want %d", tc.name, got, tc.authChecks)
		}
	}
	// Without a runner, gh comes from PATH; this machine may not have it, and then there is no
	// source for what has no file.
	prs, issues := gh.Choose(t.Context(), gh.Choice{Dir: t.TempDir(), PRsJSON: "p.json"})
	if prs == nil || prs.Name() != "file" {
		t.Fatalf("Choose without a runner: pull requests from %v", prs)
	}
	if _, ok := gh.Installed(); !ok && issues != nil {
		t.Fatalf("without gh installed, issues come from %s", issues.Name())
	}
}

func TestExecRunner(t *testing.T) {
	t.Parallel()
	// The runner runs any binary with an argument list and no shell: git stands in for gh.
	r := gh.ExecRunner{Path: "git"}
	out, _, err := r.Run(t.Context(), t.TempDir(), "--version")
	if err != nil || !strings.HasPrefix(string(out), "git version") {
		t.Fatalf("Run = %q, %v", out, err)
	}
	_, stderr, err := r.Run(t.Context(), t.TempDir(), "log")
	if err == nil || !strings.Contains(string(stderr), "not a git repository") {
		t.Fatalf("a failing command = %q, %v", stderr, err)
	}
	if gh.Authenticated(t.Context(), r, t.TempDir()) {
		t.Fatal("git auth status succeeded")
	}
}

// TestChooseAsksForThePageSize: the gh source Choose builds asks gh for ingest.gh_page_size
// items per page, and domain.GHSearchMax when none is given.
func TestChooseAsksForThePageSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		size int
		want string
	}{{7, "7"}, {0, strconv.Itoa(domain.GHSearchMax)}} {
		r := &fakeRunner{answers: map[string]answer{"auth status": {}, "pr list": {stdout: "[]"}}}
		prs, _ := gh.Choose(t.Context(), gh.Choice{Dir: t.TempDir(), IssuesJSON: "i.json", Runner: r, PageSize: tc.size})
		if _, err := prs.PullRequests(t.Context(), time.Time{}); err != nil {
			t.Fatalf("PullRequests: %v", err)
		}
		last := r.calls[len(r.calls)-1]
		if i := slices.Index(last, "--limit"); i < 0 || last[i+1] != tc.want {
			t.Errorf("page size %d: gh %q, want --limit %s", tc.size, last, tc.want)
		}
	}
}

// TestNewCLIRefusesAPageSizeGitHubCannotServe: a page size outside 1 to domain.GHSearchMax is a
// wiring mistake.
func TestNewCLIRefusesAPageSizeGitHubCannotServe(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, domain.GHSearchMax + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewCLI(%d) did not panic", size)
				}
			}()
			gh.NewCLI(&fakeRunner{}, ".", size, ingesttest.Masker())
		}()
	}
}
