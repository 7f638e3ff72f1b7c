package httpapi

import (
	"context"
	"net/http"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

// The durable consumer operations (spec 03, "Durable consumers"). The use cases authorize
// (events.catch_up on the instance) and refuse people; the handlers only map.

// errConsumersOff answers the consumer operations of a server built without them.
var errConsumersOff = problem.New(problem.ErrNotFound, "Durable consumers are not available.")

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

// ListConsumerEvents is listEvents after the consumer's acked_seq (or the client's after,
// when it reads ahead of its acks): the same page, written by the same writer, with the same
// 410.
func (s *Server) ListConsumerEvents(ctx context.Context, req apigen.ListConsumerEventsRequestObject) (apigen.ListConsumerEventsResponseObject, error) {
	if s.consumers == nil {
		return nil, errConsumersOff
	}
	var in syncmod.ConsumerEventsInput
	if req.Params.Limit != nil {
		in.Limit = *req.Params.Limit
	}
	if req.Params.After != nil {
		in.After, in.AfterGiven = *req.Params.After, true
	}
	res, page, err := s.consumers.Events(ctx, req.Name, in)
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		if _, ok := syncmod.IsResync(err); ok {
			r, ok := problem.Declared(ctx, err, []int{http.StatusGone})
			if ok {
				return goneResponse{r}, nil
			}
		}
		return nil, err
	}
	return eventPage{res: res, page: page}, nil
}

// VisitListConsumerEventsResponse implements apigen.ListConsumerEventsResponseObject.
func (p eventPage) VisitListConsumerEventsResponse(w http.ResponseWriter) error {
	return p.VisitListEventsResponse(w)
}

// VisitListConsumerEventsResponse implements apigen.ListConsumerEventsResponseObject.
func (g goneResponse) VisitListConsumerEventsResponse(w http.ResponseWriter) error {
	return g.VisitListEventsResponse(w)
}

// toAPIConsumer maps a consumer to the API's Consumer.
func toAPIConsumer(c syncmod.Consumer) apigen.Consumer {
	return apigen.Consumer{
		Name: c.Name, AckedSeq: c.AckedSeq, SyncEpoch: c.SyncEpoch,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}
