package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// EditMessage replaces the content of the message of the path; the use case authorizes
// message.update once the message is loaded (on the message for its author, on the channel
// for anyone else): 200 with the message, 400 naming content_md, 404 for a message the actor
// may not see, 403 for one it may not change, 409 for a deleted one.
func (s *Server) EditMessage(ctx context.Context, req apigen.EditMessageRequestObject) (apigen.EditMessageResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	m, err := s.messages.Edit(ctx, req.MessageId, req.Body.ContentMd)
	if err != nil {
		return nil, err
	}
	return apigen.EditMessage200JSONResponse(toAPIMessage(m)), nil
}
