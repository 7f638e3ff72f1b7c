package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// DeactivatePrincipal deactivates the principal of the path after principal.deactivate on it
// (owners only): 200 with the principal, 404 for an unknown one, 409 for the last active
// owner.
func (s *Server) DeactivatePrincipal(ctx context.Context, req apigen.DeactivatePrincipalRequestObject) (apigen.DeactivatePrincipalResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalDeactivate, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: req.PrincipalId}); err != nil {
		return nil, err
	}
	p, err := s.principals.Deactivate(ctx, req.PrincipalId)
	if err != nil {
		return nil, err
	}
	return apigen.DeactivatePrincipal200JSONResponse(toAPIPrincipal(p)), nil
}
