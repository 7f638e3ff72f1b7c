package httpapi

import (
	"context"
	"errors"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// RevokeToken revokes the token of the path. It decides twice: first token.admin on the actor
// itself (may it manage tokens at all: a pending device or an app without the scope may not),
// before anything is read; then, the token looked up, token.admin on the token's principal.
// A token of another principal the actor may not administer answers 404 like an unknown
// one, so token ids of others cannot be probed. 200 with the token, revoked (idempotent).
func (s *Server) RevokeToken(ctx context.Context, req apigen.RevokeTokenRequestObject) (apigen.RevokeTokenResponseObject, error) {
	who, _ := actor.From(ctx) // without an actor the authorizer refuses (401)
	if err := s.authz.Authorize(ctx, kernel.ActionTokenAdmin, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: who.PrincipalID}); err != nil {
		return nil, err
	}
	tok, err := s.tokens.Get(ctx, req.TokenId)
	if err != nil {
		return nil, err
	}
	err = s.authz.Authorize(ctx, kernel.ActionTokenAdmin, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: tok.PrincipalID})
	if errors.Is(err, problem.ErrForbidden) {
		return nil, identity.ErrTokenNotFound
	}
	if err != nil {
		return nil, err
	}
	tok, err = s.tokens.Revoke(ctx, req.TokenId)
	if err != nil {
		return nil, err
	}
	return apigen.RevokeToken200JSONResponse(toAPITokenInfo(tok)), nil
}
