package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// CreateGrant grants a role after grant.admin on the grant collection: 201 with the grant; 400
// validation_failed naming principal_id, resource_kind, resource_id or role; 403 when the
// actor manages no grants, does not administer the grant's resource, or grants owner without
// being one; 404 for a space or channel it cannot see or that does not exist; 409 for a second
// grant of the principal on the resource.
func (s *Server) CreateGrant(ctx context.Context, req apigen.CreateGrantRequestObject) (apigen.CreateGrantResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionGrantAdmin, grantResource(uuid.Nil)); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	g, err := s.grants.CreateGrant(ctx, toGrantInput(*req.Body))
	if err != nil {
		return nil, err
	}
	return apigen.CreateGrant201JSONResponse(toAPIGrant(g)), nil
}
