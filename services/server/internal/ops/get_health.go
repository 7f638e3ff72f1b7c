package ops

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetHealth answers 200 {"status":"ok"} whenever the process serves HTTP. It
// deliberately checks nothing else: a liveness probe that fails on a slow
// database would make an orchestrator restart healthy processes.
func (s *Server) GetHealth(_ context.Context, _ apigen.GetHealthRequestObject) (apigen.GetHealthResponseObject, error) {
	return apigen.GetHealth200JSONResponse{Status: apigen.HealthStatusOk}, nil
}
