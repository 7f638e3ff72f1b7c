package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetConsumer returns one of the actor's consumers.
func (s *Server) GetConsumer(ctx context.Context, req apigen.GetConsumerRequestObject) (apigen.GetConsumerResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	c, err := s.consumers.Get(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return apigen.GetConsumer200JSONResponse(toAPIConsumer(c)), nil
}
