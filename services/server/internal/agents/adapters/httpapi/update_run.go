package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/apigen"
)

// UpdateRun moves a run of the calling agent: 200 with the run.
func (s *Server) UpdateRun(ctx context.Context, req apigen.UpdateRunRequestObject) (apigen.UpdateRunResponseObject, error) {
	if req.Body == nil {
		return nil, fmt.Errorf("update run: read body: %w", errMissingBody)
	}
	run, err := s.runs.Update(ctx, req.RunId, agents.RunChange{State: string(req.Body.State), Progress: req.Body.Progress})
	if err != nil {
		return nil, fmt.Errorf("update run: update: %w", err)
	}
	return apigen.UpdateRun200JSONResponse(toAPIRun(run)), nil
}
