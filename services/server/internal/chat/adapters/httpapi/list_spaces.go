package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// ListSpaces lists the spaces the actor may read after space.read on the instance (every
// principal; the use case filters each space): 200 with the spaces, [] for none.
func (s *Server) ListSpaces(ctx context.Context, _ apigen.ListSpacesRequestObject) (apigen.ListSpacesResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceRead, authorize.Instance()); err != nil {
		return nil, err
	}
	views, err := s.spaces.List(ctx)
	if err != nil {
		return nil, err
	}
	return apigen.ListSpaces200JSONResponse(toAPISpaceViews(views)), nil
}
