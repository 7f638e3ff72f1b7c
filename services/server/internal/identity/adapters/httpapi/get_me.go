package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// GetMe returns the principal the request's token belongs to, after principal.read on that
// principal (a pending device is refused there, like for every action).
func (s *Server) GetMe(ctx context.Context, _ apigen.GetMeRequestObject) (apigen.GetMeResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalRead, self(ctx)); err != nil {
		return nil, err
	}
	p, err := s.principals.Get(ctx, self(ctx).ID)
	if err != nil {
		return nil, err
	}
	return apigen.GetMe200JSONResponse(toAPIPrincipal(p)), nil
}
