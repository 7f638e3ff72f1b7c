// Package httpapi is the authz module's HTTP edge: the strict-server handlers of createGrant,
// revokeGrant and listGrants (one file each, named after the operation) and the mapping
// between the API's models and the module's. Every handler first authorizes grant.admin on the
// grant resource (api/operations.yaml), which asks whether the actor manages any grants; the
// use cases then decide on the grant's own resource (404 for one the actor cannot see, 403 for
// one it sees but does not administer). Successes are typed responses; every problem is
// returned as the error of its kind, so the server's one edge writer renders it and a 404 is
// byte for byte the 404 of a missing resource.
package httpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel/authorize"
)

// GrantAdmin is what the handlers need of the grant use cases (app.Grants implements it).
type GrantAdmin interface {
	// CreateGrant makes a grant for the actor in ctx after deciding on its resource.
	CreateGrant(ctx context.Context, in authz.GrantInput) (authz.Grant, error)
	// RevokeGrant revokes a grant for the actor in ctx after deciding on its resource.
	RevokeGrant(ctx context.Context, grantID uuid.UUID) error
	// ListGrants returns one page of the grants the actor in ctx manages.
	ListGrants(ctx context.Context, principalID, after uuid.UUID, limit int) (app.GrantPage, error)
}

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides every operation before it runs.
	Authorizer authorize.Authorizer
	// Grants are the grant use cases.
	Grants GrantAdmin
}

// Server implements the grant operations of apigen.StrictServerInterface (CreateGrant,
// RevokeGrant, ListGrants); wire embeds it in the one strict server it mounts.
type Server struct {
	authz  authorize.Authorizer
	grants GrantAdmin
}

// New returns a Server over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start instead of failing the first request.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Grants == nil {
		errs = append(errs, errors.New("grants port is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("authz http: %w", err)
	}
	return &Server{authz: deps.Authorizer, grants: deps.Grants}, nil
}
