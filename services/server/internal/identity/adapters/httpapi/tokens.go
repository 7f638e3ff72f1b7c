package httpapi

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// ListTokens lists a page of the tokens of the query's principal (the actor's own without
// one) after token.admin on that principal: one's own, an owner anyone's (403 for anyone
// else's, since principals are readable by every principal).
func (s *Server) ListTokens(ctx context.Context, req apigen.ListTokensRequestObject) (apigen.ListTokensResponseObject, error) {
	// Without an actor the principal is uuid.Nil, and the authorizer refuses it (401).
	who, _ := actor.From(ctx)
	principal := who.PrincipalID
	if req.Params.PrincipalId != nil {
		principal = *req.Params.PrincipalId
	}
	if err := s.authz.Authorize(ctx, kernel.ActionTokenAdmin, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: principal}); err != nil {
		return nil, err
	}
	limit := s.pageSize
	if req.Params.Limit != nil && *req.Params.Limit >= 1 && *req.Params.Limit < limit {
		limit = *req.Params.Limit
	}
	var after uuid.UUID
	if req.Params.After != nil {
		after = *req.Params.After
	}
	page, err := s.tokens.List(ctx, principal, after, limit)
	if err != nil {
		return nil, err
	}
	out := apigen.TokenList{Items: make([]apigen.TokenInfo, len(page.Items))}
	for i, t := range page.Items {
		out.Items[i] = toAPITokenInfo(t)
	}
	if page.Next != uuid.Nil {
		next := page.Next
		out.NextCursor = &next
	}
	return apigen.ListTokens200JSONResponse(out), nil
}

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

// ReactivatePrincipal reactivates the principal of the path after principal.deactivate on it
// (owners only): 200 with the principal, 404 for an unknown one.
func (s *Server) ReactivatePrincipal(ctx context.Context, req apigen.ReactivatePrincipalRequestObject) (apigen.ReactivatePrincipalResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalDeactivate, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: req.PrincipalId}); err != nil {
		return nil, err
	}
	p, err := s.principals.Reactivate(ctx, req.PrincipalId)
	if err != nil {
		return nil, err
	}
	return apigen.ReactivatePrincipal200JSONResponse(toAPIPrincipal(p)), nil
}

// toAPITokenInfo converts a stored token into the API's TokenInfo, leaving out what it does
// not have (no null).
func toAPITokenInfo(t identity.TokenInfo) apigen.TokenInfo {
	out := apigen.TokenInfo{Id: t.ID, PrincipalId: t.PrincipalID, CreatedAt: t.CreatedAt}
	if t.DeviceID != uuid.Nil {
		id, name, status := t.DeviceID, t.DeviceName, apigen.DeviceStatus(t.DeviceStatus)
		out.DeviceId, out.DeviceName, out.DeviceStatus = &id, &name, &status
	}
	if t.Scopes != nil {
		scopes := make([]apigen.AppScope, len(t.Scopes))
		for i, s := range t.Scopes {
			scopes[i] = apigen.AppScope(s)
		}
		out.Scopes = &scopes
	}
	out.ExpiresAt = optTime(t.ExpiresAt)
	out.RevokedAt = optTime(t.RevokedAt)
	out.LastUsedAt = optTime(t.LastUsedAt)
	return out
}
