package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// DeleteMessage redacts the message of the path; the use case authorizes message.delete once
// the message is loaded, like EditMessage: 204 (also for a message deleted before), 404 for
// a message the actor may not see, 403 for one it may not delete.
func (s *Server) DeleteMessage(ctx context.Context, req apigen.DeleteMessageRequestObject) (apigen.DeleteMessageResponseObject, error) {
	if err := s.messages.Delete(ctx, req.MessageId); err != nil {
		return nil, err
	}
	return apigen.DeleteMessage204Response{}, nil
}
