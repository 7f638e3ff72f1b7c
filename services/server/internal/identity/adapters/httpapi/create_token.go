package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// CreateToken issues a token for the principal of the path after principal.admin on that
// principal: 201 with the secret (this once, with Cache-Control no-store), its id and the new
// device's id when the body names a device; 400 for bad device options; 404 for an unknown
// principal, the same answer as for one the actor may not see; 409 for a deactivated one.
func (s *Server) CreateToken(ctx context.Context, req apigen.CreateTokenRequestObject) (apigen.CreateTokenResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalAdmin, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: req.PrincipalId}); err != nil {
		return nil, err
	}
	device, err := toDeviceInput(req.Body)
	if err != nil {
		return nil, err
	}
	tok, err := s.tokens.Issue(ctx, req.PrincipalId, device)
	if err != nil {
		return nil, err
	}
	return apigen.CreateToken201JSONResponse{
		Body:    toAPIToken(tok),
		Headers: apigen.CreateToken201ResponseHeaders{CacheControl: noStore},
	}, nil
}
