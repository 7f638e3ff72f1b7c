package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// AckEvents moves the consumer forward, never back.
func (s *Server) AckEvents(ctx context.Context, req apigen.AckEventsRequestObject) (apigen.AckEventsResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	if req.Body == nil {
		return nil, problem.Validation(problem.FieldError{Field: "body", Message: "is required"})
	}
	c, err := s.consumers.Ack(ctx, req.Name, req.Body.Seq)
	if err != nil {
		return nil, err
	}
	return apigen.AckEvents200JSONResponse(toAPIConsumer(c)), nil
}
