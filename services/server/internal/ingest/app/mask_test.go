package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
)

// TestNoSecretReachesAnything gives every free-text field of pull requests, issues and commits
// (and the branch, the remote URL and the file names) credential-shaped values, several of
// them unparsable, and fails a record: nothing of them reaches a message, a thread title, a
// stored record or cursor, the report, its warnings or the log.
func TestNoSecretReachesAnything(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := ingesttest.All()
	e.git.repo = domain.RawRepository{RemoteURL: ingesttest.Secrets()[10].Value, TopLevel: "/src/" + s, Branch: "fix-" + ingesttest.Secrets()[1].Value, HasCommits: true}
	e.prs.prs = []domain.RawPR{
		{Number: 1, Title: "t " + s, Body: "b " + s, Author: s, State: s, CreatedAt: s, UpdatedAt: at(1), ClosedAt: s, MergedAt: s,
			HeadRef: s, BaseRef: s, MergeCommit: s, URL: "https://example.com/x?" + s, Labels: []string{s}},
		{Number: 2, Title: s, Body: s, UpdatedAt: s},
	}
	e.issues.issues = []domain.RawIssue{
		{Number: 3, Title: s, Body: s, Author: s, State: s, StateReason: s, CreatedAt: s, UpdatedAt: at(2), ClosedAt: s, URL: s, Labels: []string{s, s}},
		{Number: 4, Title: "fails " + s, UpdatedAt: at(3)},
	}
	e.git.commits = []domain.RawCommit{
		{SHA: sha(1), Parents: s, AuthoredAt: s, CommittedAt: s, AuthorName: s, AuthorEmail: s, Subject: s, Body: s},
		{SHA: sha(2), Parents: sha(1), AuthorName: "Sam", Subject: "Merge pull request #1 from " + s, Body: s},
	}
	e.git.files[sha(1)] = []string{s, "a.go"}
	e.w.failKeys[domain.IssueKey(domain.NewRepository(e.git.repo, ingesttest.Masker()).Name, 4)] = &domain.GitError{Phase: "x", Stderr: s, Mask: ingesttest.Masker()}

	rep := e.run(0)
	if rep.Issues.Failed != 1 || rep.PRs.Created != 2 || rep.Commits.Created != 2 {
		t.Fatalf("pass = %+v", rep)
	}
	check := func(what, text string) {
		t.Helper()
		if leaks := ingesttest.Leaks(text); len(leaks) > 0 {
			t.Errorf("%s holds %v: %q", what, leaks, text)
		}
	}
	e.w.mu.Lock()
	for _, th := range e.w.threads {
		check("a thread title", th.Title)
	}
	for _, m := range e.w.messages {
		check("a message", m.ContentMD)
		check("an external key", m.ExternalKey)
	}
	for k, r := range e.w.records {
		check("a record key", k)
		check("a record", r.Repository+r.MergeCommit)
	}
	for _, c := range e.w.cursors {
		check("a cursor", c.Repository+c.Position)
	}
	e.w.mu.Unlock()
	report, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	check("the report", string(report))
	check("the log", e.logs.String())
	if !strings.Contains(string(report), `"issues: issue #4 not created: git x: other: `) {
		t.Fatalf("the failure is not reported: %s", report)
	}
	// The masked text is still there, marked.
	if m, _ := e.messageByKey(domain.PRKey(rep.Repository, 1)); !strings.Contains(m.ContentMD, domain.Masked) {
		t.Fatalf("pull request message = %q", m.ContentMD)
	}
}
