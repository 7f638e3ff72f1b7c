package domain_test

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/ingesttest"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/ingest/domain"
)

// testLimits are the ingester's limits in these tests, below the defaults, so that the
// configured values (chat's title rule, ingest.max_body_bytes, ingest.max_listed_files) are
// what the titles and messages are cut to.
var testLimits = domain.Limits{TitleRunes: 120, BodyBytes: 1000, Files: 5, Mask: ingesttest.Masker()}

func TestNeutralizeMentions(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"@sam please look":         "\uFF20sam please look",
		"cc @alex, @robin.":        "cc \uFF20alex, \uFF20robin.",
		"(@sam)":                   "(\uFF20sam)",
		"mail alex@example.com":    "mail alex@example.com",
		"@@sam and a@ and @ alone": "@@sam and a@ and @ alone",
		"x_@sam x-@sam x.@sam":     "x_@sam x-@sam x.@sam",
		"no at sign":               "no at sign",
		"end @":                    "end @",
		"é@sam is not an address":  "é\uFF20sam is not an address",
	}
	for in, want := range tests {
		if got := domain.NeutralizeMentions(in); got != want {
			t.Errorf("NeutralizeMentions(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPRAndIssueContent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pr := domain.PR{
		Number: 12, Title: "Add the ingester for @sam", Body: "Closes #3.", Author: "alex", State: domain.StateMerged,
		CreatedAt: at, UpdatedAt: at.Add(time.Hour), MergedAt: at.Add(2 * time.Hour), HeadRef: "feature", BaseRef: "main",
		URL: "https://example.com/alex/bothy/pull/12", Labels: []string{"ingest", "docs"},
	}
	got := testLimits.PRContent(pr, "References: #3 (issue, thread x)")
	want := "**Pull request #12**: Add the ingester for \uFF20sam\n" +
		"State: merged, author: alex, branch feature into main\n" +
		"Opened 2026-01-02T03:04:05Z, updated 2026-01-02T04:04:05Z, merged 2026-01-02T05:04:05Z\n" +
		"Labels: ingest, docs\n" +
		"https://example.com/alex/bothy/pull/12\n\n" +
		"Closes #3.\n\n" +
		"References: #3 (issue, thread x)"
	if got != want {
		t.Errorf("PRContent =\n%s\nwant\n%s", got, want)
	}
	if got := testLimits.PRContent(domain.PR{Number: 1, HeadRef: "x"}, ""); got != "**Pull request #1**: \nbranch x into (unknown)" {
		t.Errorf("PRContent of a bare pull request = %q", got)
	}
	if got := testLimits.PRTitle(pr); got != "PR #12: Add the ingester for \uFF20sam" {
		t.Errorf("PRTitle = %q", got)
	}
	if got := testLimits.PRTitle(domain.PR{Number: 2}); got != "PR #2" {
		t.Errorf("PRTitle without title = %q", got)
	}
	long := testLimits.IssueTitle(domain.Issue{Number: 7, Title: strings.Repeat("é", 300)})
	if n := len([]rune(long)); n != testLimits.TitleRunes || !strings.HasPrefix(long, "Issue #7: é") {
		t.Errorf("IssueTitle of a long title has %d characters: %q", n, long)
	}

	is := domain.Issue{Number: 7, Title: "Crash", Body: strings.Repeat("x", testLimits.BodyBytes+10), Author: "sam",
		State: domain.StateClosed, StateReason: "completed", ClosedAt: at}
	got = testLimits.IssueContent(is, "")
	if !strings.HasPrefix(got, "**Issue #7**: Crash\nState: closed (completed), author: sam\nClosed 2026-01-02T03:04:05Z\n\nxxx") ||
		!strings.HasSuffix(got, domain.TruncatedMark) || len(got) > testLimits.BodyBytes+200 {
		t.Errorf("IssueContent = %.200q ... (%d bytes)", got, len(got))
	}
}

func TestCommitContent(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	c := domain.Commit{SHA: sha, Author: "Alex", Email: "alex@example.com", Subject: "Fix @robin's bug",
		Body: "Details.", AuthoredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	files := make([]string, testLimits.Files+3)
	for i := range files {
		files[i] = "f" + string(rune('a'+i))
	}
	got := testLimits.CommitContent(c, files, "References: #1 (pull request, thread t)")
	want := "**Commit 0123456**: Fix \uFF20robin's bug\n" +
		"Author: Alex <alex@example.com>, 2026-01-02T03:04:05Z\n" +
		"Commit id: " + sha + "\n\n" +
		"Details.\n\n" +
		"Files (8): " + strings.Join(files[:testLimits.Files], ", ") + " and 3 more\n\n" +
		"References: #1 (pull request, thread t)"
	if got != want {
		t.Errorf("CommitContent =\n%s\nwant\n%s", got, want)
	}
	if got := testLimits.CommitContent(domain.Commit{SHA: sha}, nil, ""); got != "**Commit 0123456**: \nCommit id: "+sha {
		t.Errorf("bare CommitContent = %q", got)
	}
	if got := testLimits.BranchTitle("main"); got != "Commits on main" {
		t.Errorf("BranchTitle = %q", got)
	}
	if got := ingesttest.Masker().CleanFiles([]string{"a.go", " ", "key-" + strings.Repeat("0123456789abcdef", 3)}); len(got) != 2 || got[1] != domain.Masked {
		t.Errorf("CleanFiles = %q", got)
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	thread, msg := uuid.MustParse("0190a5b2-4f6e-7c1a-9d0e-2f5c3b8a1e77"), uuid.MustParse("0190a5b2-4f6e-7c1a-9d0e-2f5c3b8a1e78")
	links := []domain.Link{
		{Ref: domain.Reference{Kind: domain.RefNumber, Number: 3}, Kind: domain.KindIssue, ThreadID: thread, MessageID: msg},
		{Ref: domain.Reference{Kind: domain.RefCommit, SHA: "abc1234"}, Kind: domain.KindCommit, ThreadID: thread, MessageID: msg},
		{Ref: domain.Reference{Kind: domain.RefNumber, Number: 4}, Kind: domain.KindPR, ThreadID: thread, MessageID: msg},
	}
	want := "References: #3 (issue, thread " + thread.String() + "), abc1234 (commit, message " + msg.String() +
		" in thread " + thread.String() + "), #4 (pull request, thread " + thread.String() + ")"
	if got := domain.ReferencesLine(links); got != want {
		t.Errorf("ReferencesLine =\n%s\nwant\n%s", got, want)
	}
	if domain.ReferencesLine(nil) != "" {
		t.Error("ReferencesLine(nil) is not empty")
	}
	if got := domain.LaterReferences("pull request #2", links[:1]); got != "References of pull request #2 to records written after it: #3 (issue, thread "+thread.String()+")" {
		t.Errorf("LaterReferences = %q", got)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	tests := map[string]string{
		domain.CommitKey(sha):                  "git:commit:" + sha,
		domain.PRKey("alex/bothy", 12):         "gh:pr:alex/bothy#12",
		domain.IssueKey("alex/bothy", 3):       "gh:issue:alex/bothy#3",
		domain.BranchKey("alex/bothy", "main"): "git:branch:alex/bothy:main",
		domain.LaterKey("gh:pr:alex/bothy#12"): "gh:pr:alex/bothy#12:refs",
		domain.CommitPrefix("abc1234"):         "git:commit:abc1234",
	}
	for got, want := range tests {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
	for k, noun := range map[domain.Kind]string{domain.KindPR: "pull request", domain.KindIssue: "issue", domain.KindCommit: "commit", domain.KindBranch: "branch"} {
		if !k.Valid() || k.Noun() != noun {
			t.Errorf("kind %q: valid %v noun %q", k, k.Valid(), k.Noun())
		}
	}
	if domain.Kind("tag").Valid() {
		t.Error("tag is a kind")
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	s := domain.FormatTime(at)
	back, ok := domain.ParseTime(s)
	if s != "2026-01-02T02:04:05.000000006Z" || !ok || !back.Equal(at) || back.Location() != time.UTC {
		t.Errorf("FormatTime = %q, ParseTime = %v %v", s, back, ok)
	}
	if _, ok := domain.ParseTime("yesterday"); ok {
		t.Error("ParseTime(yesterday) ok")
	}
}
