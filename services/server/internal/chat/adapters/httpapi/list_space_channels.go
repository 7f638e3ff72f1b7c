package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// ListSpaceChannels lists the channels of the space of the path the actor may read; the use
// case authorizes space.read on the space once loaded: 200 with the channels ([] for none),
// 404 for a space the actor may not see.
func (s *Server) ListSpaceChannels(ctx context.Context, req apigen.ListSpaceChannelsRequestObject) (apigen.ListSpaceChannelsResponseObject, error) {
	views, err := s.channels.ListInSpace(ctx, req.SpaceId)
	if err != nil {
		return nil, err
	}
	return apigen.ListSpaceChannels200JSONResponse(toAPIChannelViews(views)), nil
}
