package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// ListMessages returns one page of the messages of the thread of the path with a seq above
// after; the use case authorizes thread.read on the thread once loaded: 200 with the page
// and, when it is full, next_cursor; 400 naming after when it is negative; 404 for a thread
// the actor may not see. A limit that is absent, below 1 or above chat.messages_page_size is
// that page size (spec 05: capped, never an error).
func (s *Server) ListMessages(ctx context.Context, req apigen.ListMessagesRequestObject) (apigen.ListMessagesResponseObject, error) {
	var after int64
	if req.Params.After != nil {
		after = *req.Params.After
	}
	if after < 0 {
		return nil, problem.Validation(problem.FieldError{Field: "after", Message: "must be 0 or more"})
	}
	limit := s.pageSize
	if l := req.Params.Limit; l != nil && *l >= 1 && *l < limit {
		limit = *l
	}
	ms, err := s.messages.List(ctx, req.ThreadId, after, limit)
	if err != nil {
		return nil, err
	}
	return apigen.ListMessages200JSONResponse(toAPIMessagePage(ms, limit)), nil
}
