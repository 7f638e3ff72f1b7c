package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// ListConsumers lists the actor's consumers.
func (s *Server) ListConsumers(ctx context.Context, _ apigen.ListConsumersRequestObject) (apigen.ListConsumersResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	list, err := s.consumers.List(ctx)
	if err != nil {
		return nil, err
	}
	out := apigen.ListConsumers200JSONResponse{Consumers: make([]apigen.Consumer, 0, len(list))}
	for _, c := range list {
		out.Consumers = append(out.Consumers, toAPIConsumer(c))
	}
	return out, nil
}
