package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// GetPrincipal returns one principal as the directory shows it, after principal.read on it:
// an unknown id is 404, an app's token 403 (no scope covers principal.read).
func (s *Server) GetPrincipal(ctx context.Context, req apigen.GetPrincipalRequestObject) (apigen.GetPrincipalResponseObject, error) {
	res := authorize.Resource{Kind: kernel.ResourcePrincipal, ID: req.PrincipalId}
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalRead, res); err != nil {
		return nil, err
	}
	p, err := s.principals.Get(ctx, req.PrincipalId)
	if err != nil {
		return nil, err
	}
	return apigen.GetPrincipal200JSONResponse(toAPIDirectoryPrincipal(p)), nil
}
