package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
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

// self is the actor's own principal as a resource; without an actor its id is uuid.Nil and
// the authorizer answers unauthenticated.
func self(ctx context.Context) authorize.Resource {
	a, _ := actor.From(ctx)
	return authorize.Resource{Kind: kernel.ResourcePrincipal, ID: a.PrincipalID}
}

// Principal resources without an id. The policy decides principal.admin with the actor's
// instance role whatever the id, so these ask the same question as a principal with its id.
var (
	// newPrincipal is the principal createPerson and createApp are about to create.
	newPrincipal = authorize.Resource{Kind: kernel.ResourcePrincipal}
	// anyPrincipal is the principal of a device approveDevice has not looked up yet.
	anyPrincipal = authorize.Resource{Kind: kernel.ResourcePrincipal}
)
