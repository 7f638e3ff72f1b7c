// Package httpapi is the identity module's HTTP edge: the authentication middleware every
// operation with a security requirement runs behind, and the strict-server handlers of
// getMe, createPerson, createApp, createToken, approveDevice, listTokens, revokeToken,
// deactivatePrincipal and reactivatePrincipal (one file each, named after
// the operation). Every handler calls the authorizer first; successes are typed responses,
// and every problem (denial, bad input, unknown id, conflict) is returned as the error of its
// kind, so the one edge writer of the server (problem.Write through the strict server's error
// hook) renders it: a 404 for a missing principal is then byte for byte the 404 for one the
// actor may not see.
package httpapi

import (
	"context"
	"errors"
	"fmt"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
)

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides every operation before it runs.
	Authorizer authorize.Authorizer
	// Principals creates and reads principals.
	Principals identity.Principals
	// Tokens issues tokens.
	Tokens identity.Tokens
	// Devices approves devices.
	Devices identity.Devices
	// Listing pages the directory (listPrincipals).
	Listing identity.PrincipalListing
	// TokensPageSize is identity.tokens_page_size: the default and largest page of
	// listTokens (at least 1).
	TokensPageSize int
}

// Server implements the identity operations of apigen.StrictServerInterface (GetMe,
// CreatePerson, CreateApp, CreateToken, ApproveDevice, ListTokens, RevokeToken,
// DeactivatePrincipal, ReactivatePrincipal); wire embeds it in the one strict
// server it mounts.
type Server struct {
	authz      authorize.Authorizer
	principals identity.Principals
	tokens     identity.Tokens
	devices    identity.Devices
	listing    identity.PrincipalListing
	pageSize   int
}

// New returns a Server over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start instead of failing the first request.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Principals == nil {
		errs = append(errs, errors.New("principals port is nil"))
	}
	if deps.Tokens == nil {
		errs = append(errs, errors.New("tokens port is nil"))
	}
	if deps.Devices == nil {
		errs = append(errs, errors.New("devices port is nil"))
	}
	if deps.Listing == nil {
		errs = append(errs, errors.New("listing port is nil"))
	}
	if deps.TokensPageSize < 1 {
		errs = append(errs, fmt.Errorf("tokens page size is %d, want at least 1", deps.TokensPageSize))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("identity http: %w", err)
	}
	return &Server{authz: deps.Authorizer, principals: deps.Principals, tokens: deps.Tokens, devices: deps.Devices, listing: deps.Listing, pageSize: deps.TokensPageSize}, nil
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
