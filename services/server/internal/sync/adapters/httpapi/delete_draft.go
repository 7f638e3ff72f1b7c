package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// DeleteDraft removes the actor's draft in the channel of the path, or in its thread of the
// thread_id query parameter; the use case authorizes draft.write on the channel once loaded:
// 204 also when there was no draft (nothing is appended then), 404 for a channel the actor
// may not see or a thread that does not lie in it.
func (s *Server) DeleteDraft(ctx context.Context, req apigen.DeleteDraftRequestObject) (apigen.DeleteDraftResponseObject, error) {
	threadID := uuid.Nil
	if req.Params.ThreadId != nil {
		threadID = *req.Params.ThreadId
	}
	if err := s.personal.DeleteDraft(ctx, req.ChannelId, threadID); err != nil {
		return nil, err
	}
	return apigen.DeleteDraft204Response{}, nil
}
