package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
)

// AckInvocation acknowledges an invocation of the calling agent with its token: 200 with the
// invocation. The invocations use cases authorize themselves (ADR 0031).
func (s *Server) AckInvocation(ctx context.Context, req apigen.AckInvocationRequestObject) (apigen.AckInvocationResponseObject, error) {
	if req.Body == nil {
		return nil, fmt.Errorf("ack invocation: read body: %w", errMissingBody)
	}
	inv, err := s.invocations.Ack(ctx, req.InvocationId, req.Body.InvocationToken)
	if err != nil {
		return nil, fmt.Errorf("ack invocation: ack: %w", err)
	}
	return apigen.AckInvocation200JSONResponse(toAPIInvocation(inv)), nil
}
