package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// SearchMessages returns one page of the messages matching q that the actor may read, best
// first, after thread.read on the instance (every principal; an app through messages:read):
// 200 with the hits and, when the page was full, next_cursor; 400 naming q, before or cursor
// (the use case checks them). A limit that is absent, below 1 or above chat.search_page_size is
// that page size. Filters on a space, channel, thread or author the actor cannot see find
// nothing rather than a 404, so they leak nothing.
func (s *Server) SearchMessages(ctx context.Context, req apigen.SearchMessagesRequestObject) (apigen.SearchMessagesResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, authorize.Instance()); err != nil {
		return nil, err
	}
	p := req.Params
	q := chat.SearchQuery{
		Text: p.Q, SpaceID: orNil(p.SpaceId), ChannelID: orNil(p.ChannelId), ThreadID: orNil(p.ThreadId),
		AuthorID: orNil(p.AuthorId), Before: orZero(p.Before), After: orZero(p.After),
	}
	if p.Cursor != nil {
		q.Cursor = *p.Cursor
	}
	if p.Limit != nil {
		q.Limit = *p.Limit
	}
	page, err := s.search.Messages(ctx, q)
	if err != nil {
		return nil, err
	}
	return apigen.SearchMessages200JSONResponse(toAPISearchResults(page)), nil
}

func orNil(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// toAPISearchResults maps a page of hits; items are [] when there are none and next_cursor is
// omitted on the last page (no JSON null).
func toAPISearchResults(p chat.SearchPage) apigen.SearchResults {
	out := apigen.SearchResults{Items: make([]apigen.SearchHit, 0, len(p.Hits))}
	for _, h := range p.Hits {
		ex := make([]apigen.ExcerptSegment, 0, len(h.Excerpt))
		for _, seg := range h.Excerpt {
			ex = append(ex, apigen.ExcerptSegment{Text: seg.Text, Match: seg.Match})
		}
		out.Items = append(out.Items, apigen.SearchHit{Message: toAPIMessage(h.Message), Rank: h.Rank, Excerpt: ex})
	}
	if p.NextCursor != "" {
		c := p.NextCursor
		out.NextCursor = &c
	}
	return out
}
