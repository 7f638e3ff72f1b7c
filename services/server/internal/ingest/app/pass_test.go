package app_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// history gives the env two pull requests (#1 merged as commit 3, #2 merged by a GitHub merge
// commit 4), two issues and four commits; commit 1 and 2 have no pull request.
func history(e *env) {
	e.prs.prs = []domain.RawPR{
		{Number: 1, Title: "Add the ingester", Body: "First cut.", Author: "alex", State: "MERGED", UpdatedAt: at(10), MergeCommit: sha(3), HeadRef: "ingest", BaseRef: "main"},
		{Number: 2, Title: "Docs", Author: "sam", State: "MERGED", UpdatedAt: at(20), HeadRef: "docs", BaseRef: "main"},
	}
	e.issues.issues = []domain.RawIssue{
		{Number: 3, Title: "Crash on start", Author: "robin", State: "CLOSED", StateReason: "COMPLETED", UpdatedAt: at(5)},
		{Number: 4, Title: "Slow catch-up", Author: "sam", State: "OPEN", UpdatedAt: at(15)},
	}
	e.git.commits = []domain.RawCommit{
		{SHA: sha(1), AuthorName: "Alex", AuthorEmail: "alex@example.com", AuthoredAt: at(1), Subject: "Initial commit"},
		{SHA: sha(2), Parents: sha(1), AuthorName: "Sam", AuthorEmail: "sam@example.com", AuthoredAt: at(2), Subject: "Add a README"},
		{SHA: sha(3), Parents: sha(2), AuthorName: "Alex", AuthorEmail: "alex@example.com", AuthoredAt: at(11), Subject: "Add the ingester"},
		{SHA: sha(4), Parents: sha(3), AuthorName: "Sam", AuthorEmail: "sam@example.com", AuthoredAt: at(21), Subject: "Merge pull request #2 from sam/docs"},
	}
	e.git.files[sha(1)] = []string{"README.md"}
	e.git.files[sha(3)] = []string{"internal/ingest/ingest.go", "Makefile"}
}

func TestPassWritesEveryRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	rep := e.run(0)

	want := ingest.Report{
		Repository: "alex/bothy", Branch: "main", ChannelID: e.channel,
		PRs:     ingest.SectionReport{Source: "file", Created: 2, Complete: true, Cursor: domain.FormatTime(epoch.Add(20 * 60e9))},
		Issues:  ingest.SectionReport{Source: "file", Created: 2, Complete: true, Cursor: domain.FormatTime(epoch.Add(15 * 60e9))},
		Commits: ingest.SectionReport{Source: "git", Created: 4, Complete: true, Cursor: sha(4)},
		Budget:  ingest.BudgetReport{Used: 8}, Warnings: []string{}, Done: true,
		// Commit 4's subject names #2, written before it.
		References: ingest.ReferenceReport{Inline: 1},
	}
	if !equalReports(rep, want) {
		t.Fatalf("report =\n %+v\nwant\n %+v", rep, want)
	}
	for _, s := range ingest.Sections() {
		if got := e.cursor(s); got != rep.Section(s).Cursor {
			t.Errorf("stored cursor of %s = %q, report %q", s, got, rep.Section(s).Cursor)
		}
	}

	// Pull requests and issues are threads; commit 3 lies in the thread of #1 (mergeCommit),
	// commit 4 in that of #2 (its subject), commits 1 and 2 in the branch's thread.
	pr1, _ := e.messageByKey(domain.PRKey("alex/bothy", 1))
	pr2, _ := e.messageByKey(domain.PRKey("alex/bothy", 2))
	c1, _ := e.messageByKey(domain.CommitKey(sha(1)))
	c2, _ := e.messageByKey(domain.CommitKey(sha(2)))
	c3, _ := e.messageByKey(domain.CommitKey(sha(3)))
	c4, _ := e.messageByKey(domain.CommitKey(sha(4)))
	if c3.ThreadID != pr1.ThreadID || c4.ThreadID != pr2.ThreadID || c1.ThreadID != c2.ThreadID || c1.Seq != 1 || c2.Seq != 2 {
		t.Fatalf("commits placed wrong: c1 %v/%d c2 %v/%d c3 %v (pr1 %v) c4 %v (pr2 %v)", c1.ThreadID, c1.Seq, c2.ThreadID, c2.Seq, c3.ThreadID, pr1.ThreadID, c4.ThreadID, pr2.ThreadID)
	}
	if got := e.w.threads[c1.ThreadID].Title; got != "Commits on main" {
		t.Errorf("branch thread title = %q", got)
	}
	if got := e.w.threads[pr1.ThreadID].Title; got != "PR #1: Add the ingester" {
		t.Errorf("pull request thread title = %q", got)
	}
	if !strings.Contains(c3.ContentMD, "Files (2): internal/ingest/ingest.go, Makefile") || !strings.HasPrefix(c3.ContentMD, "**Commit abc0003**: Add the ingester") {
		t.Errorf("commit message = %q", c3.ContentMD)
	}
	// Every record is stored with its place, in the same transaction as its message.
	if got := len(e.w.records); got != 9 {
		t.Errorf("%d records stored, want 9 (2 pull requests, 2 issues, 4 commits, 1 branch)", got)
	}
	if r := e.w.records[domain.BranchKey("alex/bothy", "main")]; r.ThreadID != c1.ThreadID || r.MessageID != c1.ID || r.Kind != domain.KindBranch {
		t.Errorf("branch record = %+v", r)
	}
	if r := e.w.records[domain.PRKey("alex/bothy", 1)]; r.MergeCommit != sha(3) || r.ChannelID != e.channel || !r.CreatedAt.Equal(epoch) {
		t.Errorf("pull request record = %+v", r)
	}

	// The app principal was created with its scopes and made a member of the channel by itself.
	p := e.appPrincipal()
	if p.Kind != actor.KindApp || !slices.Equal(p.Scopes, app.PrincipalScopes()) || p.DisplayName != app.PrincipalName {
		t.Errorf("app principal = %+v", p)
	}
	if g := e.grantsOnChannel(); len(g) != 1 || g[0].PrincipalID != p.ID || g[0].Role != authz.RoleMember || g[0].CreatedBy != p.ID {
		t.Errorf("grants on the channel = %+v", g)
	}
	// Progress was reported for every record of every section.
	last := map[ingest.Section]ingest.Progress{}
	for _, pr := range e.progress {
		last[pr.Section] = pr
	}
	if last[ingest.SectionPRs] != (ingest.Progress{Section: ingest.SectionPRs, Done: 2, Total: 2}) ||
		last[ingest.SectionCommits] != (ingest.Progress{Section: ingest.SectionCommits, Done: 4, Total: 4}) || len(e.progress) != 8 {
		t.Errorf("progress = %+v", e.progress)
	}
	// The log line has the counts and none of the records' text.
	if !strings.Contains(e.logs.String(), `"created":8`) || strings.Contains(e.logs.String(), "ingester") {
		t.Errorf("log = %s", e.logs.String())
	}
}

// equalReports compares reports but their elapsed time.
func equalReports(a, b ingest.Report) bool {
	a.ElapsedMS, b.ElapsedMS = 0, 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestSecondPassCreatesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	first := e.run(0)
	writes := e.writes()
	second := e.run(0)
	if e.writes() != writes {
		t.Fatalf("the second pass wrote %d more times", e.writes()-writes)
	}
	created := second.PRs.Created + second.Issues.Created + second.Commits.Created
	if created != 0 || second.Budget.Used != 0 || !second.Done || second.Failed() != 0 {
		t.Fatalf("second pass = %+v", second)
	}
	// The floors are inclusive: the last pull request and issue are looked at again and
	// skipped; the commits beyond the cursor are none.
	if second.PRs.Skipped != 1 || second.Issues.Skipped != 1 || second.Commits.Skipped != 0 {
		t.Fatalf("second pass skipped %d, %d, %d", second.PRs.Skipped, second.Issues.Skipped, second.Commits.Skipped)
	}
	if second.PRs.Cursor != first.PRs.Cursor || second.Commits.Cursor != first.Commits.Cursor {
		t.Fatalf("cursors moved: %+v then %+v", first, second)
	}
	if e.git.logs[len(e.git.logs)-1] != sha(4) {
		t.Fatalf("the second pass walked git from %q, want the cursor", e.git.logs[len(e.git.logs)-1])
	}
	// A pass with a budget of one over a complete history uses none of it.
	if third := e.run(1); third.Budget.Used != 0 || !third.Done {
		t.Fatalf("third pass = %+v", third)
	}
}

func TestBudgetStopsAndTheNextPassContinues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	rep := e.run(3)
	if rep.PRs.Created != 2 || rep.Issues.Created != 1 || rep.Commits.Created != 0 || rep.Budget != (ingest.BudgetReport{MaxItems: 3, Used: 3}) || rep.Done {
		t.Fatalf("first pass = %+v", rep)
	}
	if !rep.PRs.Complete || rep.Issues.Complete || rep.Commits.Complete {
		t.Fatalf("completeness = %v %v %v", rep.PRs.Complete, rep.Issues.Complete, rep.Commits.Complete)
	}
	if e.writes() != 3 {
		t.Fatalf("%d writes, want 3", e.writes())
	}
	if got := e.cursor(ingest.SectionIssues); got != domain.FormatTime(epoch.Add(5*60e9)) {
		t.Fatalf("issues cursor = %q, want issue 3's time", got)
	}
	total := 3
	for pass := 2; ; pass++ {
		rep = e.run(3)
		total += rep.PRs.Created + rep.Issues.Created + rep.Commits.Created
		if rep.Budget.Used > 3 || rep.Failed() != 0 {
			t.Fatalf("pass %d = %+v", pass, rep)
		}
		if rep.Done {
			break
		}
		if pass > 5 {
			t.Fatal("no pass finished")
		}
	}
	if total != 8 || e.writes() != 8 || len(e.w.records) != 9 {
		t.Fatalf("created %d records in all with %d writes, want 8", total, e.writes())
	}
	if c1, _ := e.messageByKey(domain.CommitKey(sha(1))); c1.Seq != 1 {
		t.Fatalf("commit 1 is message %d of its thread", c1.Seq)
	}
}

func TestFailureStallsTheCursorAndIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	e.prs.prs = append(e.prs.prs, domain.RawPR{Number: 5, Title: "Later", UpdatedAt: at(30)})
	boom := problem.Validation(problem.FieldError{Field: "content_md", Message: "must be at most 10 bytes"})
	e.w.failKeys[domain.PRKey("alex/bothy", 2)] = boom
	e.w.failKeys[domain.CommitKey(sha(2))] = errors.New("database is down")

	rep := e.run(0)
	if rep.PRs.Created != 2 || rep.PRs.Failed != 1 || rep.Commits.Created != 3 || rep.Commits.Failed != 1 || rep.Failed() != 2 {
		t.Fatalf("first pass = %+v", rep)
	}
	// Failures do not clear done: every record was tried.
	if !rep.Done || rep.Budget.Used != 9 {
		t.Fatalf("first pass done %v, used %d", rep.Done, rep.Budget.Used)
	}
	// The cursors stop before the first failure although later records were written.
	if rep.PRs.Cursor != domain.FormatTime(epoch.Add(10*60e9)) || e.cursor(ingest.SectionPRs) != rep.PRs.Cursor {
		t.Fatalf("pull request cursor = %q (stored %q), want #1's time", rep.PRs.Cursor, e.cursor(ingest.SectionPRs))
	}
	if rep.Commits.Cursor != sha(1) || e.cursor(ingest.SectionCommits) != sha(1) {
		t.Fatalf("commit cursor = %q, want commit 1", rep.Commits.Cursor)
	}
	if _, ok := e.messageByKey(domain.PRKey("alex/bothy", 5)); !ok {
		t.Fatal("the pull request after the failure was not written")
	}
	// The failed record left no message and no record row behind.
	if _, ok := e.w.records[domain.PRKey("alex/bothy", 2)]; ok {
		t.Fatal("a record row of the failed pull request exists")
	}
	wantWarnings := []string{
		"prs: pull request #2 not created: validation failed: content_md: must be at most 10 bytes",
		"commits: commit abc0002 not created: database is down",
	}
	for _, w := range wantWarnings {
		if !slices.Contains(rep.Warnings, w) {
			t.Errorf("warnings %q lack %q", rep.Warnings, w)
		}
	}
	// Commit 4 went into #2's thread only once #2 exists; in the first pass it fell back to the
	// branch thread, which is where it stays.
	c4, _ := e.messageByKey(domain.CommitKey(sha(4)))
	c1, _ := e.messageByKey(domain.CommitKey(sha(1)))
	if c4.ThreadID != c1.ThreadID {
		t.Fatalf("commit 4 is in thread %v, want the branch thread %v", c4.ThreadID, c1.ThreadID)
	}

	clear(e.w.failKeys)
	rep = e.run(0)
	if rep.PRs.Created != 1 || rep.PRs.Skipped != 2 || rep.Commits.Created != 1 || rep.Commits.Skipped != 2 || rep.Failed() != 0 || !rep.Done || rep.Budget.Used != 2 {
		t.Fatalf("second pass = %+v", rep)
	}
	if rep.PRs.Cursor != domain.FormatTime(epoch.Add(30*60e9)) || rep.Commits.Cursor != sha(4) {
		t.Fatalf("second pass cursors %q %q", rep.PRs.Cursor, rep.Commits.Cursor)
	}
}

func TestDuplicateKeyInChatIsASkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.git.commits = []domain.RawCommit{{SHA: sha(1), Subject: "one"}, {SHA: sha(2), Subject: "two"}}
	e.w.keys[domain.CommitKey(sha(1))] = true // written by something else with the same key
	rep := e.run(1)
	if rep.Commits.Skipped != 1 || rep.Commits.Created != 1 || rep.Budget.Used != 1 || !rep.Done || rep.Commits.Cursor != sha(2) {
		t.Fatalf("pass = %+v", rep)
	}
	if !slices.Contains(rep.Warnings, "commits: commit abc0001 exists in chat but not among the ingester's records; it is left as it is") {
		t.Fatalf("warnings = %q", rep.Warnings)
	}
}

func TestRejectedRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.prs.prs = []domain.RawPR{{Number: 0, Title: "no number"}, {Number: 1, Title: "ok", UpdatedAt: "yesterday"}}
	e.issues.issues = []domain.RawIssue{{Number: -2}}
	e.git.commits = []domain.RawCommit{{SHA: "not-a-sha", Subject: "x"}, {SHA: sha(1), Subject: "ok"}}
	rep := e.run(0)
	if rep.PRs.Rejected != 1 || rep.PRs.Created != 1 || rep.Issues.Rejected != 1 || rep.Commits.Rejected != 1 || rep.Commits.Created != 1 || !rep.Done {
		t.Fatalf("pass = %+v", rep)
	}
	// A pull request without a time is written but does not move the cursor.
	if rep.PRs.Cursor != "" {
		t.Fatalf("pull request cursor = %q", rep.PRs.Cursor)
	}
	for _, w := range []string{"prs: pull request: field number: record cannot be read", "pull request #1: field updatedAt dropped: not an RFC 3339 time",
		"issues: issue: field number: record cannot be read", "commits: commit: field sha: record cannot be read"} {
		if !slices.Contains(rep.Warnings, w) {
			t.Errorf("warnings %q lack %q", rep.Warnings, w)
		}
	}
}

func TestNoSourcesAndNoCommits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.git.repo.HasCommits = false
	rep := e.run(0, func(d *app.Deps) { d.PRs, d.Issues = nil, nil })
	if rep.PRs.Source != "none" || rep.Issues.Source != "none" || !rep.Done || e.writes() != 0 {
		t.Fatalf("pass = %+v", rep)
	}
	if len(rep.Warnings) != 3 || !strings.HasPrefix(rep.Warnings[0], "prs: no source") || rep.Warnings[2] != "commits: HEAD has no commit yet" {
		t.Fatalf("warnings = %q", rep.Warnings)
	}
}

func TestPagingPastThePageLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.prs.pageSize = 2
	for n := 1; n <= 5; n++ {
		e.prs.prs = append(e.prs.prs, domain.RawPR{Number: n, Title: "pr", UpdatedAt: at(n)})
	}
	rep := e.run(0)
	if rep.PRs.Created != 5 || !rep.PRs.Complete || !rep.Done {
		t.Fatalf("pass = %+v", rep)
	}
	// Pages from no floor, then from the last time of each full page (inclusive: its last
	// record comes again and is skipped).
	want := []string{"0001-01-01T00:00:00Z", at(2), at(3), at(4), at(5)}
	var got []string
	for _, f := range e.prs.floors {
		got = append(got, f.Format("2006-01-02T15:04:05Z07:00"))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("floors = %v, want %v", got, want)
	}
	// The next pass starts at the cursor and finds nothing new.
	e.prs.floors = nil
	rep = e.run(0)
	if rep.PRs.Created != 0 || rep.PRs.Skipped != 1 || e.prs.floors[0].Format("2006-01-02T15:04:05Z07:00") != at(5) {
		t.Fatalf("second pass = %+v, floors %v", rep, e.prs.floors)
	}
}

func TestPagingStops(t *testing.T) {
	t.Parallel()
	t.Run("floor stalled", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.prs.pageSize = 2
		for n := 1; n <= 3; n++ {
			e.prs.prs = append(e.prs.prs, domain.RawPR{Number: n, UpdatedAt: at(7)})
		}
		rep := e.run(0)
		if rep.PRs.Created != 2 || rep.PRs.Complete || rep.Done || len(e.prs.floors) != 2 {
			t.Fatalf("pass = %+v, floors %v", rep, e.prs.floors)
		}
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "prs: paging stopped: a full page did not move past") {
			t.Fatalf("warnings = %q", rep.Warnings)
		}
	})
	t.Run("budget exhausted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.prs.pageSize = 2
		for n := 1; n <= 5; n++ {
			e.prs.prs = append(e.prs.prs, domain.RawPR{Number: n, UpdatedAt: at(n)})
		}
		rep := e.run(2)
		if rep.PRs.Created != 2 || rep.PRs.Complete || rep.Done || len(e.prs.floors) != 1 {
			t.Fatalf("pass = %+v, floors %v", rep, e.prs.floors)
		}
	})
	t.Run("short page with the budget used up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.prs.prs = []domain.RawPR{{Number: 1, UpdatedAt: at(1)}, {Number: 2, UpdatedAt: at(2)}}
		rep := e.run(1)
		if rep.PRs.Created != 1 || rep.PRs.Complete || rep.Done || rep.PRs.Cursor != domain.FormatTime(epoch.Add(60e9)) {
			t.Fatalf("pass = %+v", rep)
		}
	})
}

func TestTiesAreSortedAndReexamined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The source returns ties in any order; the pass writes them by number.
	e.issues.issues = []domain.RawIssue{{Number: 9, UpdatedAt: at(1)}, {Number: 3, UpdatedAt: at(1)}, {Number: 5, UpdatedAt: at(0)}}
	e.w.failKeys[domain.IssueKey("alex/bothy", 9)] = errors.New("boom")
	rep := e.run(0)
	if rep.Issues.Created != 2 || rep.Issues.Failed != 1 || rep.Issues.Cursor != domain.FormatTime(epoch.Add(60e9)) {
		t.Fatalf("pass = %+v", rep)
	}
	if got := e.order(); !slices.Equal(got, []string{domain.IssueKey("alex/bothy", 5), domain.IssueKey("alex/bothy", 3)}) {
		t.Fatalf("written in the order %q", got)
	}
	clear(e.w.failKeys)
	rep = e.run(0)
	// The failed issue shares its time with a written one: the inclusive floor finds both.
	if rep.Issues.Created != 1 || rep.Issues.Skipped != 1 {
		t.Fatalf("second pass = %+v", rep)
	}
}

// TestMergeCommitOfAnEarlierPass: the pull request was written by an earlier pass, its merge
// commit arrives later; the commit goes into the pull request's thread, whether this pass's
// page still holds the pull request (a file source) or not (gh from the cursor).
func TestMergeCommitOfAnEarlierPass(t *testing.T) {
	t.Parallel()
	for _, pageSize := range []int{0, 1} {
		e := newEnv(t)
		e.prs.pageSize = pageSize
		e.prs.prs = []domain.RawPR{
			{Number: 1, Title: "Feature", State: "MERGED", UpdatedAt: at(1), MergeCommit: sha(3)},
			{Number: 2, Title: "Other", State: "OPEN", UpdatedAt: at(2)},
		}
		e.git.commits = []domain.RawCommit{{SHA: sha(1), Subject: "one"}}
		e.run(0)
		e.git.commits = append(e.git.commits, domain.RawCommit{SHA: sha(3), Parents: sha(1), Subject: "Feature, squashed"})
		if rep := e.run(0); rep.Commits.Created != 1 {
			t.Fatalf("page size %d: second pass = %+v", pageSize, rep)
		}
		pr1, _ := e.messageByKey(domain.PRKey("alex/bothy", 1))
		c3, _ := e.messageByKey(domain.CommitKey(sha(3)))
		if c3.ThreadID != pr1.ThreadID {
			t.Fatalf("page size %d: the merge commit is not in the pull request's thread", pageSize)
		}
	}
}
