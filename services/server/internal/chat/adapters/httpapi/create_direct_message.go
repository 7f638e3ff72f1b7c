package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// CreateDirectMessage opens the direct message of the actor and the participants after
// channel.create on the instance, decided here before the body is looked at: 201 with the
// new channel, 200 with the one that existed for the same participants (nothing written),
// 400 naming participant_ids for an empty list, too many participants or an unknown one.
// The ids are passed as given; the use case adds the actor and removes duplicates.
func (s *Server) CreateDirectMessage(ctx context.Context, req apigen.CreateDirectMessageRequestObject) (apigen.CreateDirectMessageResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionChannelCreate, authorize.Instance()); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	ch, created, err := s.channels.CreateDirect(ctx, req.Body.ParticipantIds)
	if err != nil {
		return nil, err
	}
	if created {
		return apigen.CreateDirectMessage201JSONResponse(toAPIChannel(ch)), nil
	}
	return apigen.CreateDirectMessage200JSONResponse(toAPIChannel(ch)), nil
}
