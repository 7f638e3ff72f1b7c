package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
)

// CreateRun starts a run of the calling agent in the thread: 201 with the run. The runs use
// cases authorize themselves (the run's thread decides, ADR 0027).
func (s *Server) CreateRun(ctx context.Context, req apigen.CreateRunRequestObject) (apigen.CreateRunResponseObject, error) {
	if req.Body == nil {
		return nil, fmt.Errorf("create run: read body: %w", errMissingBody)
	}
	run, err := s.runs.Create(ctx, fromAPICreateRun(req.ThreadId, *req.Body))
	if err != nil {
		return nil, fmt.Errorf("create run: create: %w", err)
	}
	return apigen.CreateRun201JSONResponse(toAPIRun(run)), nil
}
