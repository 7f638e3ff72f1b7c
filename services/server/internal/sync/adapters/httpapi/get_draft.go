package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/conditional"
)

// GetDraft answers the actor's draft in the channel of the path, or in its thread of the
// thread_id query parameter, with its text; the use case authorizes draft.write on the
// channel once loaded: 200 with the draft's ETag (kernel/conditional, the tag of the body),
// 304 when If-None-Match names it, 403 for a viewer, 404 when there is no draft, for a
// channel the actor may not see or a thread that does not lie in it.
func (s *Server) GetDraft(ctx context.Context, req apigen.GetDraftRequestObject) (apigen.GetDraftResponseObject, error) {
	threadID := uuid.Nil
	if req.Params.ThreadId != nil {
		threadID = *req.Params.ThreadId
	}
	d, err := s.personal.GetDraft(ctx, req.ChannelId, threadID)
	if err != nil {
		return nil, err
	}
	body := toAPIDraft(d)
	etag, err := conditional.Of(body)
	if err != nil {
		return nil, err
	}
	cacheControl := conditional.CacheControl
	if conditional.NotModified(req.Params.IfNoneMatch, etag) {
		return apigen.GetDraft304Response{Headers: apigen.NotModifiedResponseHeaders{ETag: &etag, CacheControl: &cacheControl}}, nil
	}
	return apigen.GetDraft200JSONResponse{Body: body, Headers: apigen.GetDraft200ResponseHeaders{ETag: &etag, CacheControl: &cacheControl}}, nil
}
