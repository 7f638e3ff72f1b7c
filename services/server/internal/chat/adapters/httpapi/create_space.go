package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// CreateSpace creates a space after space.create on the instance, decided here before the
// body is looked at: 201 with the space; 400 naming the bad fields; 403 for an actor who may
// not create spaces.
func (s *Server) CreateSpace(ctx context.Context, req apigen.CreateSpaceRequestObject) (apigen.CreateSpaceResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceCreate, authorize.Instance()); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	sp, err := s.spaces.Create(ctx, chat.SpaceInput{Name: req.Body.Name, Description: deref(req.Body.Description)})
	if err != nil {
		return nil, err
	}
	return apigen.CreateSpace201JSONResponse(toAPISpace(sp)), nil
}
