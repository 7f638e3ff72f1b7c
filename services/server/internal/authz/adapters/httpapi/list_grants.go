package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// ListGrants lists one page of the grants the actor manages after grant.admin on the grant
// collection (403 when it manages none): 200 with the items the actor may see, filtered
// without auditing, and next_cursor while there may be more.
func (s *Server) ListGrants(ctx context.Context, req apigen.ListGrantsRequestObject) (apigen.ListGrantsResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionGrantAdmin, grantResource(uuid.Nil)); err != nil {
		return nil, err
	}
	var principal, cursor uuid.UUID
	if req.Params.PrincipalId != nil {
		principal = *req.Params.PrincipalId
	}
	if req.Params.Cursor != nil {
		cursor = *req.Params.Cursor
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = int(*req.Params.Limit)
	}
	page, err := s.grants.ListGrants(ctx, principal, cursor, limit)
	if err != nil {
		return nil, err
	}
	return apigen.ListGrants200JSONResponse(toAPIGrantList(page)), nil
}
