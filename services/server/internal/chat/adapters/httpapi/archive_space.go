package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// ArchiveSpace archives the space of the path; the use case authorizes space.archive on it
// once loaded: 200 with the space, 404 for one the actor may not see, 403 for one it sees but
// does not administer.
func (s *Server) ArchiveSpace(ctx context.Context, req apigen.ArchiveSpaceRequestObject) (apigen.ArchiveSpaceResponseObject, error) {
	sp, err := s.spaces.Archive(ctx, req.SpaceId)
	if err != nil {
		return nil, err
	}
	return apigen.ArchiveSpace200JSONResponse(toAPISpace(sp)), nil
}
