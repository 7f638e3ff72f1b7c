package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// CreateApp creates an app with its scopes after principal.admin on the principal about to
// be created (decided with the actor's instance role): 201 with the app, 400 validation_failed naming the bad fields (an unknown scope, none at all), 409
// conflict for a taken handle.
func (s *Server) CreateApp(ctx context.Context, req apigen.CreateAppRequestObject) (apigen.CreateAppResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalAdmin, newPrincipal); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	p, err := s.principals.CreateApp(ctx, toAppInput(*req.Body))
	if err != nil {
		return nil, err
	}
	return apigen.CreateApp201JSONResponse(toAPIPrincipal(p)), nil
}
