package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// SaveDraft stores the actor's draft in the channel of the path, or in its thread thread_id;
// the use case authorizes draft.write on the channel once loaded: 200 with the draft as
// stored, 400 naming content_md, 404 for a channel the actor may not see or a thread that
// does not lie in it, 403 for a channel it may only read.
func (s *Server) SaveDraft(ctx context.Context, req apigen.SaveDraftRequestObject) (apigen.SaveDraftResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	threadID := uuid.Nil
	if req.Body.ThreadId != nil {
		threadID = *req.Body.ThreadId
	}
	d, err := s.personal.SaveDraft(ctx, req.ChannelId, threadID, req.Body.ContentMd)
	if err != nil {
		return nil, err
	}
	return apigen.SaveDraft200JSONResponse(toAPIDraft(d)), nil
}
