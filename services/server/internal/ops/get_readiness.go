package ops

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// Names of the readiness checks, as reported in the 200 body.
const (
	checkDatabase   = "database"
	checkMigrations = "migrations"
)

// GetReadiness answers 200 when the database answers and every migration is
// applied, both within the readiness timeout; otherwise a 503 problem
// unavailable whose detail names the failed check. The underlying error is
// logged, never sent: the endpoint is public. A failed ping skips the
// migration check, which would only fail the same way.
func (s *Server) GetReadiness(ctx context.Context, _ apigen.GetReadinessRequestObject) (apigen.GetReadinessResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	if err := s.readiness.Ping(ctx); err != nil {
		return s.notReady(ctx, checkDatabase, "The database does not answer.", err), nil
	}
	pending, err := s.readiness.PendingMigrations(ctx)
	if err != nil {
		return s.notReady(ctx, checkMigrations, "The migration state cannot be read.", err), nil
	}
	if pending > 0 {
		detail := fmt.Sprintf("Database migrations are pending (%d); run bothy migrate.", pending)
		return s.notReady(ctx, checkMigrations, detail, nil), nil
	}
	return apigen.GetReadiness200JSONResponse{
		Status: apigen.ReadinessStatusReady,
		Checks: []apigen.ReadinessCheck{
			{Name: checkDatabase, Status: apigen.ReadinessCheckStatusOk},
			{Name: checkMigrations, Status: apigen.ReadinessCheckStatusOk},
		},
	}, nil
}

// notReady logs why check failed and returns the 503 problem for it.
func (s *Server) notReady(ctx context.Context, check, detail string, cause error) apigen.GetReadinessResponseObject {
	attrs := []any{"check", check, "detail", detail}
	if cause != nil {
		attrs = append(attrs, "error", cause.Error())
	}
	s.logger.WarnContext(ctx, "not ready", attrs...)
	p := problem.From(ctx, problem.New(problem.ErrUnavailable, detail))
	return apigen.GetReadiness503ApplicationProblemPlusJSONResponse{
		UnavailableApplicationProblemPlusJSONResponse: apigen.UnavailableApplicationProblemPlusJSONResponse(toAPIProblem(p)),
	}
}
