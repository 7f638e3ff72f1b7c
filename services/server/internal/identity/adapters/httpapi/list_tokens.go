package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
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
