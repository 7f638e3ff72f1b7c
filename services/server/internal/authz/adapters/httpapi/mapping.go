package httpapi

import (
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// grantResource is the resource every grant operation authorizes first: the grant kind of
// api/operations.yaml, with the grant's id where there is one. The policy decides it as "does
// the actor manage any grants"; the use case then decides on the grant's own resource.
func grantResource(id uuid.UUID) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceGrant, ID: id}
}

// errNoBody is the validation error of an operation whose required body is missing.
var errNoBody = problem.Validation(problem.FieldError{Field: "body", Message: "is required"})

// toGrantInput converts a createGrant body; the use case validates it.
func toGrantInput(b apigen.CreateGrantRequest) authz.GrantInput {
	in := authz.GrantInput{
		PrincipalID:  b.PrincipalId,
		ResourceKind: kernel.ResourceKind(b.ResourceKind),
		Role:         authz.Role(b.Role),
	}
	if b.ResourceId != nil {
		in.ResourceID = *b.ResourceId
	}
	return in
}

// toAPIGrant converts a grant into the API's Grant: resource_id is absent for the instance,
// as in the request.
func toAPIGrant(g authz.Grant) apigen.Grant {
	out := apigen.Grant{
		Id:           g.ID,
		PrincipalId:  g.PrincipalID,
		ResourceKind: apigen.GrantResourceKind(g.ResourceKind),
		Role:         apigen.GrantRole(g.Role),
		CreatedAt:    g.CreatedAt,
		CreatedBy:    g.CreatedBy,
	}
	if g.ResourceKind != kernel.ResourceInstance {
		id := g.ResourceID
		out.ResourceId = &id
	}
	return out
}

// toAPIGrantList converts a page of grants; items is [] when empty, next_cursor absent at the
// end.
func toAPIGrantList(p app.GrantPage) apigen.GrantList {
	out := apigen.GrantList{Items: make([]apigen.Grant, len(p.Items))}
	for i, g := range p.Items {
		out.Items[i] = toAPIGrant(g)
	}
	if p.NextCursor != uuid.Nil {
		c := p.NextCursor
		out.NextCursor = &c
	}
	return out
}
