package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// RemoveReaction takes the actor's reaction of the path off the message of the path, like
// AddReaction: 204 also when the actor had not made it, 409 for an archived channel.
func (s *Server) RemoveReaction(ctx context.Context, req apigen.RemoveReactionRequestObject) (apigen.RemoveReactionResponseObject, error) {
	if err := s.reactions.Remove(ctx, req.MessageId, req.Reaction); err != nil {
		return nil, err
	}
	return apigen.RemoveReaction204Response{}, nil
}
