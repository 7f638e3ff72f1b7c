package httpapi

import (
	"context"
	"net/http"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

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
