package app

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// search is the chat.Search view of Service.
type search struct{ s *Service }

var _ chat.Search = search{}

// Search returns the chat.Search port.
func (s *Service) Search() chat.Search { return search{s} }

// Messages implements chat.Search like catch-up pages the log (spec 03, 04): thread.read on
// the instance, the input checked (q, before, cursor), then one query whose prefilter comes
// from the actor's Scope (Decider.Scope) and thread.read on each row's message in filter mode,
// with the same Decider, so what the prefilter lets through is decided with the permissions
// of query time. The page is full when the query returned Limit rows, whether or not
// authorize kept them all; NextCursor is then the position of the last row read.
func (v search) Messages(ctx context.Context, q chat.SearchQuery) (chat.SearchPage, error) {
	page, err := v.messages(ctx, q)
	if err != nil {
		return chat.SearchPage{}, fmt.Errorf("chat: search messages: %w", err)
	}
	return page, nil
}

func (v search) messages(ctx context.Context, q chat.SearchQuery) (chat.SearchPage, error) {
	s := v.s
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, authorize.Instance()); err != nil {
		return chat.SearchPage{}, err
	}
	text, err := domain.SearchText(q.Text, s.cfg.SearchQueryMaxChars)
	if err != nil {
		return chat.SearchPage{}, err
	}
	if err := domain.SearchWindow(q.Before, q.After); err != nil {
		return chat.SearchPage{}, err
	}
	var from *domain.SearchPosition
	if q.Cursor != "" {
		p, err := domain.DecodeSearchCursor(q.Cursor)
		if err != nil {
			return chat.SearchPage{}, err
		}
		from = &p
	}
	usable, err := s.store.SearchUsable(ctx, text)
	if err != nil {
		return chat.SearchPage{}, err
	}
	if !usable {
		return chat.SearchPage{}, domain.ErrNothingToFind
	}
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return chat.SearchPage{}, err
	}
	scope := dec.Scope()
	limit := q.Limit
	if limit < 1 || limit > s.cfg.SearchPageSize {
		limit = s.cfg.SearchPageSize
	}
	rows, err := s.store.SearchMessages(ctx, SearchSpec{
		Text: text,
		Visible: SearchVisibility{
			All: scope.InstanceWide(), ChannelIDs: scope.VisibleChannelIDs(), SpaceIDs: scope.FullyVisibleSpaceIDs(),
		},
		SpaceID: q.SpaceID, ChannelID: q.ChannelID, ThreadID: q.ThreadID, AuthorID: q.AuthorID,
		Before: q.Before, After: q.After, From: from, Limit: limit, ExcerptWords: s.cfg.SearchExcerptWords,
	})
	if err != nil {
		return chat.SearchPage{}, err
	}
	filter := authorize.Filter(ctx)
	page := chat.SearchPage{Hits: make([]chat.SearchHit, 0, len(rows))}
	for _, r := range rows {
		err := dec.Authorize(filter, kernel.ActionThreadRead, messageResource(r.Message))
		switch {
		case isDenial(err):
			continue
		case err != nil:
			return chat.SearchPage{}, fmt.Errorf("authorize message %s: %w", r.Message.ID, err)
		}
		page.Hits = append(page.Hits, chat.SearchHit{Message: r.Message, Rank: r.Rank, Excerpt: domain.Excerpt(r.Headline)})
	}
	hits := make([]chat.Message, len(page.Hits))
	for i, h := range page.Hits {
		hits[i] = h.Message
	}
	if err := s.withReactions(ctx, hits); err != nil {
		return chat.SearchPage{}, fmt.Errorf("chat: search: %w", err)
	}
	for i := range page.Hits {
		page.Hits[i].Message = hits[i]
	}
	if len(rows) == limit {
		last := rows[len(rows)-1]
		page.NextCursor = domain.EncodeSearchCursor(domain.SearchPosition{Rank: last.Rank, ID: last.Message.ID})
	}
	return page, nil
}
