package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/domain"
)

// remote is one record of a page of pull requests or issues, past its masking boundary.
type remote struct {
	number  int
	updated time.Time
	item    item
}

// fetchPage reads one page from floor and turns it into remote records; full reports whether
// more may follow.
type fetchPage func(ctx context.Context, floor time.Time) (records []remote, full bool, err error)

// pullRequests walks the pull requests: each becomes a thread.
func (ps *pass) pullRequests(ctx context.Context) (err error) {
	src := ps.s.d.PRs
	if src == nil {
		return ps.noSource(ingest.SectionPRs, &ps.rep.PRs, "pull requests")
	}
	sec := ps.newSection(ingest.SectionPRs, &ps.rep.PRs, src.Name())
	defer func() { err = errors.Join(err, ps.finish(ctx, sec)) }()
	return ps.remoteSection(ctx, sec, func(ctx context.Context, floor time.Time) ([]remote, bool, error) {
		page, err := src.PullRequests(ctx, floor)
		if err != nil {
			return nil, false, fmt.Errorf("pull requests: %w", err)
		}
		ps.unreadable(sec, page.Unreadable)
		var out []remote
		for _, raw := range page.Items {
			pr, warnings, err := domain.NewPR(raw, ps.s.d.Limits.Mask)
			ps.warn(warnings...)
			if err != nil {
				sec.rep.Rejected++
				ps.warn(fmt.Sprintf("%s: %v", sec.name, err))
				continue
			}
			if pr.MergeCommit != "" {
				ps.merges[pr.MergeCommit] = pr.Number
			}
			out = append(out, remote{number: pr.Number, updated: pr.UpdatedAt, item: ps.prItem(pr)})
		}
		return out, page.Full, nil
	})
}

// issues walks the issues: each becomes a thread.
func (ps *pass) issues(ctx context.Context) (err error) {
	src := ps.s.d.Issues
	if src == nil {
		return ps.noSource(ingest.SectionIssues, &ps.rep.Issues, "issues")
	}
	sec := ps.newSection(ingest.SectionIssues, &ps.rep.Issues, src.Name())
	defer func() { err = errors.Join(err, ps.finish(ctx, sec)) }()
	return ps.remoteSection(ctx, sec, func(ctx context.Context, floor time.Time) ([]remote, bool, error) {
		page, err := src.Issues(ctx, floor)
		if err != nil {
			return nil, false, fmt.Errorf("issues: %w", err)
		}
		ps.unreadable(sec, page.Unreadable)
		var out []remote
		for _, raw := range page.Items {
			is, warnings, err := domain.NewIssue(raw, ps.s.d.Limits.Mask)
			ps.warn(warnings...)
			if err != nil {
				sec.rep.Rejected++
				ps.warn(fmt.Sprintf("%s: %v", sec.name, err))
				continue
			}
			out = append(out, remote{number: is.Number, updated: is.UpdatedAt, item: ps.issueItem(is)})
		}
		return out, page.Full, nil
	})
}

// noSource reports a section without a source: nothing to walk, so it is complete.
func (ps *pass) noSource(name ingest.Section, rep *ingest.SectionReport, what string) error {
	rep.Source, rep.Complete, rep.Cursor = "none", true, ps.cursors[name]
	ps.warn(fmt.Sprintf("%s: no source (gh is not installed or not authenticated, and no JSON file was given); %s were not read", name, what))
	return nil
}

// unreadable reports the records of a page that could not be decoded.
func (ps *pass) unreadable(sec *section, n int) {
	if n > 0 {
		sec.rep.Rejected += n
		ps.warn(fmt.Sprintf("%s: %d records of the source could not be read", sec.name, n))
	}
}

// remoteSection pages through pull requests or issues from the section's cursor. Every page
// is masked and checked before anything else touches it (fetch), then filtered by the floor,
// re-sorted by updated_at and number (search makes no hard promise about ties), and handled;
// domain.DecidePage decides whether the window is complete or another page follows.
func (ps *pass) remoteSection(ctx context.Context, sec *section, fetch fetchPage) error {
	floor, ok := domain.ParseTime(sec.start)
	if sec.start != "" && !ok {
		ps.warn(fmt.Sprintf("%s: the cursor is not a time; the section starts from the beginning", sec.name))
		sec.start, sec.position = "", ""
	}
	for {
		records, full, err := fetch(ctx, floor)
		if err != nil {
			return err
		}
		records = slices.DeleteFunc(records, func(r remote) bool { return !r.updated.IsZero() && r.updated.Before(floor) })
		// Records without a time (dropped as unparsable) go last and never move the cursor.
		slices.SortStableFunc(records, func(a, b remote) int {
			if a.updated.IsZero() != b.updated.IsZero() {
				if a.updated.IsZero() {
					return 1
				}
				return -1
			}
			return cmp.Or(a.updated.Compare(b.updated), cmp.Compare(a.number, b.number))
		})
		items := make([]item, len(records))
		for i, r := range records {
			items[i] = r.item
			if !r.updated.IsZero() {
				items[i].position = domain.FormatTime(r.updated)
			}
		}
		sec.total += len(items)
		if err := ps.handleAll(ctx, sec, items); err != nil {
			return err
		}
		var last time.Time
		if len(records) > 0 {
			last = records[len(records)-1].updated
		}
		outcome, next := domain.DecidePage(domain.Page{Full: full, BudgetExhausted: ps.budget.Exhausted(), Floor: floor, Last: last})
		switch outcome {
		case domain.OutcomeContinue:
			floor = next
			continue
		case domain.OutcomeWindowComplete:
			sec.rep.Complete = !sec.stopped
		case domain.OutcomeFloorStalled:
			ps.warn(fmt.Sprintf("%s: paging stopped: a full page did not move past %s (more records than a page share one updated time); the window is not proven complete", sec.name, domain.FormatTime(floor)))
		case domain.OutcomeBudgetExhausted:
		}
		return nil
	}
}

// prItem is the item of a pull request.
func (ps *pass) prItem(pr domain.PR) item {
	key := domain.PRKey(ps.repo.Name, pr.Number)
	return item{
		key: key, label: fmt.Sprintf("pull request #%d", pr.Number),
		refs: domain.References(pr.Title + "\n" + pr.Body),
		write: func(ctx context.Context, refs string) (uuid.UUID, []domain.Record, error) {
			th, m, err := ps.s.d.Threads.Create(ctx, chat.ThreadInput{
				ChannelID: ps.p.ChannelID, Title: ps.s.d.Limits.PRTitle(pr), ContentMD: ps.s.d.Limits.PRContent(pr, refs), ExternalKey: key,
			})
			if err != nil {
				return uuid.Nil, nil, err
			}
			return th.ID, []domain.Record{ps.record(key, domain.KindPR, th.ID, m.ID, pr.MergeCommit)}, nil
		},
	}
}

// issueItem is the item of an issue.
func (ps *pass) issueItem(is domain.Issue) item {
	key := domain.IssueKey(ps.repo.Name, is.Number)
	return item{
		key: key, label: fmt.Sprintf("issue #%d", is.Number),
		refs: domain.References(is.Title + "\n" + is.Body),
		write: func(ctx context.Context, refs string) (uuid.UUID, []domain.Record, error) {
			th, m, err := ps.s.d.Threads.Create(ctx, chat.ThreadInput{
				ChannelID: ps.p.ChannelID, Title: ps.s.d.Limits.IssueTitle(is), ContentMD: ps.s.d.Limits.IssueContent(is, refs), ExternalKey: key,
			})
			if err != nil {
				return uuid.Nil, nil, err
			}
			return th.ID, []domain.Record{ps.record(key, domain.KindIssue, th.ID, m.ID, "")}, nil
		},
	}
}

// commits walks the commits of HEAD beyond the cursor, oldest first: each becomes a message in
// the thread of the pull request that merged it when known, else in the branch's "commits"
// thread, which the first such commit starts.
func (ps *pass) commits(ctx context.Context) (err error) {
	sec := ps.newSection(ingest.SectionCommits, &ps.rep.Commits, "git")
	defer func() { err = errors.Join(err, ps.finish(ctx, sec)) }()
	if !ps.repo.HasCommits {
		ps.warn("commits: HEAD has no commit yet")
		sec.rep.Complete = true
		return nil
	}
	since := sec.start
	if since != "" && !domain.ValidSHA(since) {
		ps.warn("commits: the cursor is not a commit id; the whole history is walked")
		since, sec.start, sec.position = "", "", ""
	}
	raws, parseErrs, err := ps.s.d.Git.Log(ctx, since)
	var gitErr *domain.GitError
	if err != nil && since != "" && errors.As(err, &gitErr) && gitErr.Class() == domain.GitFailureUnknownRevision {
		ps.warn(fmt.Sprintf("commits: the cursor's commit %s is not in the repository (was history rewritten?); the whole history is walked", since[:7]))
		since, sec.start, sec.position = "", "", ""
		raws, parseErrs, err = ps.s.d.Git.Log(ctx, since)
	}
	if err != nil {
		return fmt.Errorf("commits: %w", err)
	}
	ps.unreadable(sec, len(parseErrs))
	var files map[string][]string
	if len(raws) > 0 {
		if files, err = ps.s.d.Git.TouchedFiles(ctx, since); err != nil {
			return fmt.Errorf("commits: %w", err)
		}
	}
	commits := make([]domain.Commit, 0, len(raws))
	shas := make([]string, 0, len(raws))
	for _, raw := range raws {
		c, warnings, err := domain.NewCommit(raw, ps.s.d.Limits.Mask)
		ps.warn(warnings...)
		if err != nil {
			sec.rep.Rejected++
			ps.warn(fmt.Sprintf("%s: %v", sec.name, err))
			continue
		}
		commits = append(commits, c)
		shas = append(shas, c.SHA)
	}
	merged, err := ps.s.d.Store.MergedPullRequests(ctx, shas)
	if err != nil {
		return fmt.Errorf("commits: look up merges: %w", err)
	}
	ps.mergedBy = merged
	keys := []string{domain.BranchKey(ps.repo.Name, ps.repo.Branch)}
	items := make([]item, len(commits))
	for i, c := range commits {
		for _, n := range []int{ps.merges[c.SHA], domain.MergedPullRequest(c.Subject)} {
			if n > 0 {
				keys = append(keys, domain.PRKey(ps.repo.Name, n))
			}
		}
		items[i] = ps.commitItem(c, ps.s.d.Limits.Mask.CleanFiles(files[c.SHA]))
	}
	if err := ps.load(ctx, keys); err != nil {
		return err
	}
	sec.total = len(items)
	if err := ps.handleAll(ctx, sec, items); err != nil {
		return err
	}
	sec.rep.Complete = !sec.stopped
	return nil
}

// commitItem is the item of a commit.
func (ps *pass) commitItem(c domain.Commit, files []string) item {
	key := domain.CommitKey(c.SHA)
	return item{
		key: key, label: "commit " + c.Short(), position: c.SHA,
		refs: domain.References(c.Subject + "\n" + c.Body),
		write: func(ctx context.Context, refs string) (uuid.UUID, []domain.Record, error) {
			content := ps.s.d.Limits.CommitContent(c, files, refs)
			if thread, ok := ps.commitThread(c); ok {
				m, err := ps.s.d.Messages.Post(ctx, chat.MessageInput{ThreadID: thread, ContentMD: content, ExternalKey: key})
				if err != nil {
					return uuid.Nil, nil, err
				}
				return thread, []domain.Record{ps.record(key, domain.KindCommit, thread, m.ID, "")}, nil
			}
			th, m, err := ps.s.d.Threads.Create(ctx, chat.ThreadInput{
				ChannelID: ps.p.ChannelID, Title: ps.s.d.Limits.BranchTitle(ps.repo.Branch), ContentMD: content, ExternalKey: key,
			})
			if err != nil {
				return uuid.Nil, nil, err
			}
			return th.ID, []domain.Record{
				ps.record(key, domain.KindCommit, th.ID, m.ID, ""),
				ps.record(domain.BranchKey(ps.repo.Name, ps.repo.Branch), domain.KindBranch, th.ID, m.ID, ""),
			}, nil
		},
	}
}

// commitThread is the thread a commit goes to when it exists: its merging pull request's
// (gh's mergeCommit from this pass's pages or an earlier pass's record, or GitHub's "Merge pull
// request #n" subject), else its branch's. Only threads of the pass's channel count.
func (ps *pass) commitThread(c domain.Commit) (uuid.UUID, bool) {
	var candidates []domain.Record
	add := func(r domain.Record, ok bool) {
		if ok {
			candidates = append(candidates, r)
		}
	}
	if n := ps.merges[c.SHA]; n > 0 {
		add(ps.lookup(domain.PRKey(ps.repo.Name, n)))
	}
	r, ok := ps.mergedBy[c.SHA]
	add(r, ok)
	if n := domain.MergedPullRequest(c.Subject); n > 0 {
		add(ps.lookup(domain.PRKey(ps.repo.Name, n)))
	}
	add(ps.lookup(domain.BranchKey(ps.repo.Name, ps.repo.Branch)))
	for _, r := range candidates {
		if r.ChannelID == ps.p.ChannelID {
			return r.ThreadID, true
		}
	}
	return uuid.Nil, false
}
