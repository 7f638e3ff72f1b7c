package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// CreateConsumer creates the actor's consumer at the head (201), or returns the one of that
// name unchanged (200).
func (s *Server) CreateConsumer(ctx context.Context, req apigen.CreateConsumerRequestObject) (apigen.CreateConsumerResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	c, created, err := s.consumers.Ensure(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	if created {
		return apigen.CreateConsumer201JSONResponse(toAPIConsumer(c)), nil
	}
	return apigen.CreateConsumer200JSONResponse(toAPIConsumer(c)), nil
}
