package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// ArchiveChannel archives the channel of the path; the use case authorizes channel.archive
// on it once loaded: 200 with the channel, 404 for one the actor may not see, 403 for one it
// sees but does not administer.
func (s *Server) ArchiveChannel(ctx context.Context, req apigen.ArchiveChannelRequestObject) (apigen.ArchiveChannelResponseObject, error) {
	ch, err := s.channels.Archive(ctx, req.ChannelId)
	if err != nil {
		return nil, err
	}
	return apigen.ArchiveChannel200JSONResponse(toAPIChannel(ch)), nil
}
