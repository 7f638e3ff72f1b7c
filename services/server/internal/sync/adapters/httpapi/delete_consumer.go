package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// DeleteConsumer forgets one of the actor's consumers (204 also when there was none).
func (s *Server) DeleteConsumer(ctx context.Context, req apigen.DeleteConsumerRequestObject) (apigen.DeleteConsumerResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	if err := s.consumers.Delete(ctx, req.Name); err != nil {
		return nil, err
	}
	return apigen.DeleteConsumer204Response{}, nil
}
