package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// CreatePerson creates a person after principal.admin on the principal about to be created
// (decided with the actor's instance role): 201 with the person,
// 400 validation_failed naming the bad fields, 409 conflict for a taken handle.
func (s *Server) CreatePerson(ctx context.Context, req apigen.CreatePersonRequestObject) (apigen.CreatePersonResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalAdmin, newPrincipal); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	p, err := s.principals.CreatePerson(ctx, toPersonInput(*req.Body))
	if err != nil {
		return nil, err
	}
	return apigen.CreatePerson201JSONResponse(toAPIPrincipal(p)), nil
}
