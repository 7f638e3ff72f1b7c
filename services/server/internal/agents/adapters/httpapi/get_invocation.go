package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
)

// GetInvocation answers an invocation to its agent or its invoking person.
func (s *Server) GetInvocation(ctx context.Context, req apigen.GetInvocationRequestObject) (apigen.GetInvocationResponseObject, error) {
	inv, err := s.invocations.Get(ctx, req.InvocationId)
	if err != nil {
		return nil, fmt.Errorf("get invocation: get: %w", err)
	}
	return apigen.GetInvocation200JSONResponse(toAPIInvocation(inv)), nil
}
