package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// GetInstance answers the instance's id, name, sync epoch and version to an actor allowed
// instance.read on the instance; a refusal is the authorizer's error, answered by the edge
// (ADR 0033).
func (s *Server) GetInstance(ctx context.Context, _ apigen.GetInstanceRequestObject) (apigen.GetInstanceResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionInstanceRead, authorize.Instance()); err != nil {
		return nil, fmt.Errorf("get instance: authorize: %w", err)
	}
	info, err := s.instance.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("get instance: %w", err)
	}
	return apigen.GetInstance200JSONResponse(toAPIInstance(info)), nil
}
