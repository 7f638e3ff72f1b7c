package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
)

// CreateChannel creates a channel in the space of the path; the use case authorizes
// channel.create on the space once loaded: 201 with the channel, 400 naming the bad fields,
// 404 for a space the actor may not see, 403 for one it does not administer, 409 for a taken
// name or an archived space.
func (s *Server) CreateChannel(ctx context.Context, req apigen.CreateChannelRequestObject) (apigen.CreateChannelResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	ch, err := s.channels.Create(ctx, chat.ChannelInput{SpaceID: req.SpaceId, Name: req.Body.Name, Topic: deref(req.Body.Topic)})
	if err != nil {
		return nil, err
	}
	return apigen.CreateChannel201JSONResponse(toAPIChannel(ch)), nil
}
