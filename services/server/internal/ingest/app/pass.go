package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/domain"
)

// pass is one run of Service.Run after its checks: the state every section shares.
type pass struct {
	s       *Service
	p       ingest.Pass
	repo    domain.Repository
	rep     *ingest.Report
	budget  domain.Budget
	cursors map[ingest.Section]string
	// created are the records written by this pass, by key; known the records of earlier
	// passes looked up so far; prefixes the lookups of abbreviated commit ids.
	created  map[string]domain.Record
	known    map[string]domain.Record
	looked   map[string]bool
	prefixes map[string][]domain.Record
	// createdCommits are the ids of the commits written by this pass, for abbreviated ids.
	createdCommits []string
	// merges maps a merge commit id to its pull request's number, from this pass's pages;
	// mergedBy holds the pull request records of earlier passes merged as a commit.
	merges   map[string]int
	mergedBy map[string]domain.Record
	// pending are the records whose references name records not written yet.
	pending []pending
}

// pending is a written record whose references could not be resolved when it was written.
type pending struct {
	key    string
	label  string
	thread uuid.UUID
	refs   []domain.Reference
}

// item is one record of a section, ready to be written.
type item struct {
	key   string
	label string
	// position is the section's cursor once the item is handled; "" leaves it.
	position string
	refs     []domain.Reference
	// write makes the chat write(s) with the references line and returns the thread and the
	// records to store in the same transaction.
	write func(ctx context.Context, refs string) (uuid.UUID, []domain.Record, error)
}

// section is the state of one section of the pass.
type section struct {
	name     ingest.Section
	rep      *ingest.SectionReport
	start    string // the cursor the pass found
	position string // the cursor so far
	// stalled: a record failed or was left unattempted, so the cursor stays where it is.
	stalled bool
	// stopped: the budget ran out; no further record is attempted.
	stopped     bool
	done, total int
}

func newPass(s *Service, p ingest.Pass, repo domain.Repository, cursors []domain.Cursor, rep *ingest.Report) *pass {
	ps := &pass{
		s: s, p: p, repo: repo, rep: rep, budget: domain.NewBudget(p.MaxItems),
		cursors: map[ingest.Section]string{}, created: map[string]domain.Record{}, known: map[string]domain.Record{},
		looked: map[string]bool{}, prefixes: map[string][]domain.Record{}, merges: map[string]int{},
		mergedBy: map[string]domain.Record{},
	}
	for _, c := range cursors {
		ps.cursors[c.Section] = c.Position
	}
	return ps
}

// run walks the sections in order, then posts the later references.
func (ps *pass) run(ctx context.Context) error {
	if err := ps.pullRequests(ctx); err != nil {
		return err
	}
	if err := ps.issues(ctx); err != nil {
		return err
	}
	if err := ps.commits(ctx); err != nil {
		return err
	}
	return ps.later(ctx)
}

// warn adds warnings to the report. Callers pass text built from validated values only
// (numbers, commit ids, field names, masked error text).
func (ps *pass) warn(lines ...string) {
	ps.rep.Warnings = append(ps.rep.Warnings, lines...)
}

// newSection starts a section from its cursor.
func (ps *pass) newSection(name ingest.Section, rep *ingest.SectionReport, source string) *section {
	start := ps.cursors[name]
	rep.Source, rep.Cursor = source, start
	return &section{name: name, rep: rep, start: start, position: start}
}

// finish stores the section's cursor when it moved. It runs on the way out of a section,
// also after a failure of the pass, so the progress made is kept; it uses a context that is
// not cancelled, since a cancelled pass still saves how far it came.
func (ps *pass) finish(ctx context.Context, sec *section) error {
	sec.rep.Cursor = sec.position
	if sec.position == "" || sec.position == sec.start {
		return nil
	}
	err := ps.s.d.Store.SaveCursor(context.WithoutCancel(ctx), domain.Cursor{
		Repository: ps.repo.Name, Section: sec.name, ChannelID: ps.p.ChannelID, Position: sec.position,
		UpdatedAt: ps.s.d.Clock.Now().UTC(),
	})
	if err != nil {
		return fmt.Errorf("%s: save cursor: %w", sec.name, err)
	}
	return nil
}

// advance moves the cursor to pos unless the section stalled.
func (sec *section) advance(pos string) {
	if !sec.stalled && pos != "" {
		sec.position = pos
	}
}

// progress tells the caller how far the section has come.
func (ps *pass) progress(sec *section) {
	if ps.p.Progress != nil {
		ps.p.Progress(ingest.Progress{Section: sec.name, Done: sec.done, Total: sec.total})
	}
}

// lookup returns the record with the key: written by this pass or looked up before.
func (ps *pass) lookup(key string) (domain.Record, bool) {
	if r, ok := ps.created[key]; ok {
		return r, true
	}
	r, ok := ps.known[key]
	return r, ok
}

// load looks up the records of earlier passes with the keys not looked up yet, in one query.
func (ps *pass) load(ctx context.Context, keys []string) error {
	var missing []string
	for _, k := range keys {
		if !ps.looked[k] {
			ps.looked[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	found, err := ps.s.d.Store.Records(ctx, missing)
	if err != nil {
		return fmt.Errorf("look up records: %w", err)
	}
	for k, r := range found {
		ps.known[k] = r
	}
	return nil
}

// refKeys are the keys a record's references may name, for load.
func (ps *pass) refKeys(refs []domain.Reference) []string {
	var keys []string
	for _, r := range refs {
		switch {
		case r.Kind == domain.RefNumber || r.Kind == domain.RefRepoNumber && r.Repo == ps.repo.Name:
			keys = append(keys, domain.PRKey(ps.repo.Name, r.Number), domain.IssueKey(ps.repo.Name, r.Number))
		case r.Full():
			keys = append(keys, domain.CommitKey(r.SHA))
		}
	}
	return keys
}

// handleAll handles the items of a section in order; its error stops the pass.
func (ps *pass) handleAll(ctx context.Context, sec *section, items []item) error {
	keys := make([]string, 0, 2*len(items))
	for _, it := range items {
		keys = append(keys, it.key)
		keys = append(keys, ps.refKeys(it.refs)...)
	}
	if err := ps.load(ctx, keys); err != nil {
		return err
	}
	for _, it := range items {
		if err := ps.handle(ctx, sec, it); err != nil {
			return err
		}
	}
	return nil
}

// handle writes one item unless its key exists (a skip, free of budget), or the budget is
// used up. A failure is counted and warned about and stalls the section's cursor; the next
// items are still tried. The error is for what stops the pass: a cancelled ctx or the store.
func (ps *pass) handle(ctx context.Context, sec *section, it item) error {
	defer func() {
		sec.done++
		ps.progress(sec)
	}()
	if _, ok := ps.lookup(it.key); ok {
		sec.rep.Skipped++
		sec.advance(it.position)
		return nil
	}
	if sec.stopped || !ps.budget.Take() {
		sec.stopped, sec.stalled = true, true
		return nil
	}
	links, later, err := ps.resolve(ctx, it.key, it.refs)
	if err != nil {
		return err
	}
	var (
		thread  uuid.UUID
		records []domain.Record
	)
	err = ps.s.d.Tx.RunInTx(ctx, func(ctx context.Context) error {
		var err error
		thread, records, err = it.write(ctx, domain.ReferencesLine(links))
		if err != nil {
			return err
		}
		return ps.s.d.Store.InsertRecords(ctx, records)
	})
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", sec.name, ctx.Err())
	case errors.Is(err, chat.ErrDuplicateKey):
		ps.budget.Refund()
		sec.rep.Skipped++
		sec.advance(it.position)
		ps.warn(fmt.Sprintf("%s: %s exists in chat but not among the ingester's records; it is left as it is", sec.name, it.label))
	case err != nil:
		sec.rep.Failed++
		sec.stalled = true
		ps.warn(fmt.Sprintf("%s: %s not created: %s", sec.name, it.label, domain.TruncateRunes(ps.s.d.Limits.Mask.CleanLine(err.Error()), 300)))
	default:
		sec.rep.Created++
		sec.advance(it.position)
		ps.rep.References.Inline += len(links)
		for _, r := range records {
			ps.created[r.Key] = r
			if r.Kind == domain.KindCommit {
				ps.createdCommits = append(ps.createdCommits, strings.TrimPrefix(r.Key, domain.CommitKey("")))
			}
		}
		if len(later) > 0 {
			ps.pending = append(ps.pending, pending{key: it.key, label: it.label, thread: thread, refs: later})
		}
	}
	return nil
}

// record is a record of this pass in its channel.
func (ps *pass) record(key string, kind domain.Kind, thread, message uuid.UUID, merge string) domain.Record {
	return domain.Record{
		Key: key, Kind: kind, Repository: ps.repo.Name, ChannelID: ps.p.ChannelID, ThreadID: thread,
		MessageID: message, MergeCommit: merge, CreatedAt: ps.s.d.Clock.Now().UTC(),
	}
}
