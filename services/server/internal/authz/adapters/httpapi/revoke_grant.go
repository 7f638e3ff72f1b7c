package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// RevokeGrant revokes a grant after grant.admin on the grant collection: 204; 403 when the
// actor manages no grants or does not administer the grant's resource (or the grant is an
// owner grant and the actor no owner); 404 for a grant that does not exist or whose resource
// the actor cannot see; 409 for the instance's last owner grant.
func (s *Server) RevokeGrant(ctx context.Context, req apigen.RevokeGrantRequestObject) (apigen.RevokeGrantResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionGrantAdmin, grantResource(req.GrantId)); err != nil {
		return nil, err
	}
	if err := s.grants.RevokeGrant(ctx, req.GrantId); err != nil {
		return nil, err
	}
	return apigen.RevokeGrant204Response{}, nil
}
