package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// ReactivatePrincipal reactivates the principal of the path after principal.deactivate on it
// (owners only): 200 with the principal, 404 for an unknown one.
func (s *Server) ReactivatePrincipal(ctx context.Context, req apigen.ReactivatePrincipalRequestObject) (apigen.ReactivatePrincipalResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalDeactivate, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: req.PrincipalId}); err != nil {
		return nil, err
	}
	p, err := s.principals.Reactivate(ctx, req.PrincipalId)
	if err != nil {
		return nil, err
	}
	return apigen.ReactivatePrincipal200JSONResponse(toAPIPrincipal(p)), nil
}
