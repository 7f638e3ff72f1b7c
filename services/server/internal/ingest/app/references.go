package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/ingest/domain"
)

// References are resolved when their record is written, so a message is written once:
//   - a reference to a record that exists then (written earlier in this pass or by an earlier
//     pass) becomes a link in the record's References line;
//   - a reference to a record written later in the same pass (a pull request naming a commit,
//     which comes later) is kept, and after the last section a reply in the referring record's
//     thread lists the ones that were written meanwhile, with an external key of its own so a
//     rerun posts it once;
//   - a reference to another repository, or to a number or full commit id this pass never
//     wrote, is counted as unresolved; an abbreviated commit id that names nothing is not
//     counted, since it may be a word that looks like one.

// match is the outcome of looking a reference up.
type match int

const (
	// matchNone: no record has the reference (yet).
	matchNone match = iota
	// matchFound: one record has it.
	matchFound
	// matchSeen: the record is the referring one or linked already; the reference is dropped.
	matchSeen
	// matchAmbiguous: an abbreviated commit id names more than one commit.
	matchAmbiguous
)

// resolve links the references of the record self to the records that exist now; later are
// the ones that may still be written in this pass.
func (ps *pass) resolve(ctx context.Context, self string, refs []domain.Reference) (links []domain.Link, later []domain.Reference, err error) {
	seen := map[string]bool{self: true}
	for _, ref := range refs {
		if ref.Kind == domain.RefRepoNumber && ref.Repo != ps.repo.Name {
			ps.rep.References.Unresolved++
			continue
		}
		rec, m, err := ps.find(ctx, ref, seen, false)
		if err != nil {
			return nil, nil, err
		}
		switch m {
		case matchAmbiguous:
			ps.rep.References.Unresolved++
		case matchFound:
			seen[rec.Key] = true
			links = append(links, link(ref, rec))
		case matchNone:
			later = append(later, ref)
		}
	}
	return links, later, nil
}

// find returns the record a reference of this repository names, among those that exist now,
// or with onlyCreated among those this pass wrote.
func (ps *pass) find(ctx context.Context, ref domain.Reference, seen map[string]bool, onlyCreated bool) (domain.Record, match, error) {
	get := ps.lookup
	if onlyCreated {
		get = func(key string) (domain.Record, bool) { r, ok := ps.created[key]; return r, ok }
	}
	var candidates []domain.Record
	switch {
	case ref.Kind == domain.RefNumber || ref.Kind == domain.RefRepoNumber:
		for _, key := range []string{domain.PRKey(ps.repo.Name, ref.Number), domain.IssueKey(ps.repo.Name, ref.Number)} {
			if r, ok := get(key); ok {
				candidates = append(candidates, r)
				break
			}
		}
	case ref.Full():
		if r, ok := get(domain.CommitKey(ref.SHA)); ok {
			candidates = append(candidates, r)
		}
	default:
		var err error
		if candidates, err = ps.byPrefix(ctx, ref.SHA, onlyCreated); err != nil {
			return domain.Record{}, matchNone, err
		}
	}
	switch {
	case len(candidates) == 0:
		return domain.Record{}, matchNone, nil
	case len(candidates) > 1:
		return domain.Record{}, matchAmbiguous, nil
	case seen[candidates[0].Key]:
		return candidates[0], matchSeen, nil
	}
	return candidates[0], matchFound, nil
}

// byPrefix returns the commits (at most two from the store: enough to tell an ambiguous id)
// whose id starts with short, written by this pass or, unless onlyCreated, an earlier one.
func (ps *pass) byPrefix(ctx context.Context, short string, onlyCreated bool) ([]domain.Record, error) {
	byKey := map[string]domain.Record{}
	for _, sha := range ps.createdCommits {
		if strings.HasPrefix(sha, short) {
			r := ps.created[domain.CommitKey(sha)]
			byKey[r.Key] = r
		}
	}
	if !onlyCreated {
		stored, ok := ps.prefixes[short]
		if !ok {
			var err error
			stored, err = ps.s.d.Store.RecordsWithPrefix(ctx, domain.CommitPrefix(short), 2)
			if err != nil {
				return nil, fmt.Errorf("look up commit %s: %w", short, err)
			}
			ps.prefixes[short] = stored
		}
		for _, r := range stored {
			byKey[r.Key] = r
		}
	}
	out := make([]domain.Record, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, r)
	}
	return out, nil
}

// link makes the link of a reference to a record.
func link(ref domain.Reference, rec domain.Record) domain.Link {
	return domain.Link{Ref: ref, Kind: rec.Kind, ThreadID: rec.ThreadID, MessageID: rec.MessageID}
}

// later posts, for every record whose references named records not written yet, a reply in
// its thread listing those written by now; the rest are unresolved.
func (ps *pass) later(ctx context.Context) error {
	for _, p := range ps.pending {
		var links []domain.Link
		seen := map[string]bool{p.key: true}
		for _, ref := range p.refs {
			rec, m, err := ps.find(ctx, ref, seen, true)
			if err != nil {
				return err
			}
			switch {
			case m == matchFound:
				seen[rec.Key] = true
				links = append(links, link(ref, rec))
			case m == matchAmbiguous, m == matchNone && (ref.Kind != domain.RefCommit || ref.Full()):
				ps.rep.References.Unresolved++
			}
		}
		if len(links) == 0 {
			continue
		}
		_, err := ps.s.d.Messages.Post(ctx, chat.MessageInput{
			ThreadID: p.thread, ContentMD: domain.LaterReferences(p.label, links), ExternalKey: domain.LaterKey(p.key),
		})
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("references: %w", ctx.Err())
		case errors.Is(err, chat.ErrDuplicateKey):
		case err != nil:
			ps.rep.References.Failed++
			ps.warn(fmt.Sprintf("references: the reply to %s not posted: %s", p.label, domain.TruncateRunes(ps.s.d.Limits.Mask.CleanLine(err.Error()), 300)))
		default:
			ps.rep.References.Later += len(links)
		}
	}
	return nil
}
