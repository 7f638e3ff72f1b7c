package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/problem"
)

// ListPrincipals returns one page of the directory after principal.read on a principal (every
// principal of the instance may; an app, which no scope covers, gets 403): the active
// principals in handle order (deactivated ones too, marked, with include_deactivated),
// filtered by prefix. The cursor is the last handle of
// the previous page; one that is no handle is a 400 naming cursor.
func (s *Server) ListPrincipals(ctx context.Context, req apigen.ListPrincipalsRequestObject) (apigen.ListPrincipalsResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalRead, anyPrincipal); err != nil {
		return nil, err
	}
	var q identity.PrincipalQuery
	if req.Params.Cursor != nil {
		h, ok := domain.NormalizeHandle(*req.Params.Cursor)
		if !ok || h != *req.Params.Cursor {
			return nil, problem.Validation(problem.FieldError{Field: "cursor", Message: "is not a cursor of this list"})
		}
		q.After = h
	}
	if req.Params.Prefix != nil {
		q.Prefix = *req.Params.Prefix
	}
	if req.Params.Limit != nil {
		q.Limit = *req.Params.Limit
	}
	if req.Params.IncludeDeactivated != nil {
		q.IncludeDeactivated = *req.Params.IncludeDeactivated
	}
	page, err := s.listing.List(ctx, q)
	if err != nil {
		return nil, err
	}
	out := apigen.DirectoryPrincipalList{Items: make([]apigen.DirectoryPrincipal, len(page.Items))}
	for i, p := range page.Items {
		out.Items[i] = toAPIDirectoryPrincipal(p)
	}
	if page.Next != "" {
		next := page.Next
		out.NextCursor = &next
	}
	return apigen.ListPrincipals200JSONResponse(out), nil
}
