package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// AddReaction puts the actor's reaction of the path on the message of the path; the use case
// authorizes reaction.write once the message is loaded and validates the reaction (the path
// segment, already percent-decoded): 204 also when the actor had made it already, 400 naming
// reaction, 404 for a message the actor may not see, 403 for a viewer, 409 for a deleted
// message, an archived channel or a reaction beyond chat.max_reactions_per_message.
func (s *Server) AddReaction(ctx context.Context, req apigen.AddReactionRequestObject) (apigen.AddReactionResponseObject, error) {
	if err := s.reactions.Add(ctx, req.MessageId, req.Reaction); err != nil {
		return nil, err
	}
	return apigen.AddReaction204Response{}, nil
}
