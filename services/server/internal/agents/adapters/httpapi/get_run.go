package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
)

// GetRun answers a run whose thread the actor may read.
func (s *Server) GetRun(ctx context.Context, req apigen.GetRunRequestObject) (apigen.GetRunResponseObject, error) {
	run, err := s.runs.Get(ctx, req.RunId)
	if err != nil {
		return nil, fmt.Errorf("get run: get: %w", err)
	}
	return apigen.GetRun200JSONResponse(toAPIRun(run)), nil
}
