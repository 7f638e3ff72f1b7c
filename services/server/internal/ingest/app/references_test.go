package app_test

import (
	"fmt"
	"strings"
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
)

// TestReferencesInAnyOrder writes records that name each other backwards (linked in their own
// message) and forwards (linked by a reply once the target is written), plus references that
// name nothing of the repository.
func TestReferencesInAnyOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Pull request #1 names a commit and an issue written after it, another repository and a
	// number never ingested; issue #5 names #1 (written before it); commit 2 names #5 and
	// commit 1 by an abbreviated id; commit 1 names commit 2 by an abbreviated id (later).
	e.prs.prs = []domain.RawPR{{Number: 1, Title: "Ingest", UpdatedAt: at(1),
		Body: fmt.Sprintf("Lands %s, fixes #5 and #1 itself; see alex/other#9, Alex/Bothy#5 and #99.", sha(2))}}
	e.issues.issues = []domain.RawIssue{{Number: 5, Title: "Follow-up of #1", UpdatedAt: at(2)}}
	e.git.commits = []domain.RawCommit{
		{SHA: sha(1), Subject: "First", Body: "Prepares abc0002."},
		{SHA: sha(2), Subject: "Second, for #5", Body: "Builds on abc0001 and cafe123."},
	}
	rep := e.run(0)
	if rep.Failed() != 0 {
		t.Fatalf("pass = %+v", rep)
	}

	pr1, _ := e.messageByKey(domain.PRKey("alex/bothy", 1))
	is5, _ := e.messageByKey(domain.IssueKey("alex/bothy", 5))
	c1, _ := e.messageByKey(domain.CommitKey(sha(1)))
	c2, _ := e.messageByKey(domain.CommitKey(sha(2)))
	if strings.Contains(pr1.ContentMD, "References:") {
		t.Errorf("pull request #1 names only records written after it, yet its message lists some: %q", pr1.ContentMD)
	}
	wantIssue := fmt.Sprintf("References: #1 (pull request, thread %s)", pr1.ThreadID)
	if !strings.HasSuffix(is5.ContentMD, wantIssue) {
		t.Errorf("issue #5 message = %q, want it to end with %q", is5.ContentMD, wantIssue)
	}
	wantCommit := fmt.Sprintf("References: #5 (issue, thread %s), abc0001 (commit, message %s in thread %s)", is5.ThreadID, c1.ID, c1.ThreadID)
	if !strings.HasSuffix(c2.ContentMD, wantCommit) {
		t.Errorf("commit 2 message = %q, want it to end with %q", c2.ContentMD, wantCommit)
	}

	// The forward references are replies in their record's thread.
	replies := e.threadMessages(pr1.ThreadID)
	wantReply := fmt.Sprintf("References of pull request #1 to records written after it: %s (commit, message %s in thread %s), #5 (issue, thread %s)",
		sha(2)[:12], c2.ID, c2.ThreadID, is5.ThreadID)
	if len(replies) != 2 || replies[1].ContentMD != wantReply || replies[1].ExternalKey != domain.LaterKey(domain.PRKey("alex/bothy", 1)) {
		t.Fatalf("thread of #1 = %+v, want the reply %q", replies, wantReply)
	}
	c1Replies := e.threadMessages(c1.ThreadID)
	if last := c1Replies[len(c1Replies)-1]; !strings.HasPrefix(last.ContentMD, "References of commit abc0001 to records written after it: abc0002 (commit, message "+c2.ID.String()) {
		t.Fatalf("last message of the branch thread = %q", last.ContentMD)
	}
	// Inline: #1 in issue 5, #5 and abc0001 in commit 2. Later: the commit and #5 of pull
	// request #1 (Alex/Bothy#5 is the same issue), abc0002 of commit 1. Unresolved: alex/other#9
	// and #99; cafe123 names nothing and is no reference.
	if got := rep.References; got.Inline != 3 || got.Later != 3 || got.Unresolved != 2 || got.Failed != 0 {
		t.Fatalf("references = %+v", got)
	}

	// A rerun posts no reply again and writes nothing.
	writes := e.writes()
	if rep := e.run(0); rep.References.Later != 0 || e.writes() != writes {
		t.Fatalf("rerun: %+v, %d writes", rep.References, e.writes()-writes)
	}
}

// TestReferencesToEarlierPasses links to records of an earlier pass, looked up in the store,
// also by an abbreviated commit id, and counts an ambiguous one as unresolved.
func TestReferencesToEarlierPasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	twin := sha(2)[:39] + "1" // shares its first 39 characters with commit 2
	e.git.commits = []domain.RawCommit{{SHA: sha(1), Subject: "one"}, {SHA: sha(2), Subject: "two"}, {SHA: twin, Subject: "twin"}}
	e.issues.issues = []domain.RawIssue{{Number: 2, Title: "Old", UpdatedAt: at(1)}}
	e.run(0)

	e.git.commits = append(e.git.commits, domain.RawCommit{SHA: sha(3), Subject: "three", Body: "After abc0001 and #2; abc0002 is ambiguous."})
	rep := e.run(0)
	c1, _ := e.messageByKey(domain.CommitKey(sha(1)))
	is2, _ := e.messageByKey(domain.IssueKey("alex/bothy", 2))
	c3, _ := e.messageByKey(domain.CommitKey(sha(3)))
	want := fmt.Sprintf("References: abc0001 (commit, message %s in thread %s), #2 (issue, thread %s)", c1.ID, c1.ThreadID, is2.ThreadID)
	if !strings.HasSuffix(c3.ContentMD, want) {
		t.Fatalf("commit 3 = %q, want it to end with %q", c3.ContentMD, want)
	}
	if rep.References.Inline != 2 || rep.References.Unresolved != 1 || e.w.prefixCalls != 2 {
		t.Fatalf("references = %+v, %d prefix lookups", rep.References, e.w.prefixCalls)
	}
}

// TestReplyFailureIsCounted: a reply that cannot be posted is a failure of the pass.
func TestReplyFailureIsCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.prs.prs = []domain.RawPR{{Number: 1, Title: "x", Body: "Lands " + sha(1), UpdatedAt: at(1)}}
	e.git.commits = []domain.RawCommit{{SHA: sha(1), Subject: "one"}}
	e.w.failKeys[domain.LaterKey(domain.PRKey("alex/bothy", 1))] = fmt.Errorf("chat is down")
	rep := e.run(0)
	if rep.References.Failed != 1 || rep.Failed() != 1 || rep.References.Later != 0 {
		t.Fatalf("references = %+v", rep.References)
	}
	if w := rep.Warnings[len(rep.Warnings)-1]; w != "references: the reply to pull request #1 not posted: chat is down" {
		t.Fatalf("warning = %q", w)
	}
}
