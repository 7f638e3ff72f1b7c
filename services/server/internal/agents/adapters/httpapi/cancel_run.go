package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
)

// CancelRun cancels a run for its requester or a manager of its channel: 200 with the run.
func (s *Server) CancelRun(ctx context.Context, req apigen.CancelRunRequestObject) (apigen.CancelRunResponseObject, error) {
	run, err := s.runs.Cancel(ctx, req.RunId)
	if err != nil {
		return nil, fmt.Errorf("cancel run: cancel: %w", err)
	}
	return apigen.CancelRun200JSONResponse(toAPIRun(run)), nil
}
