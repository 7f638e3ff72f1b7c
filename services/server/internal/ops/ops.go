// Package ops serves the operational endpoints every bothy process has:
// liveness (/healthz), readiness (/readyz) and metrics (/metrics), plus the
// HTTP metrics middleware that feeds /metrics. They are public and need no
// token, so they reveal nothing but "up", "ready or which check failed" and
// aggregate counters.
package ops

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Readiness is the port /readyz asks whether this process can serve
// requests. internal/wire binds it to the database pool and the migration
// runner; tests bind it to a fake. Both methods honour ctx's deadline,
// because a hanging database must turn into a 503, not a hanging probe.
type Readiness interface {
	// Ping returns nil when the database answers a round trip.
	Ping(ctx context.Context) error
	// PendingMigrations returns how many migrations are not applied yet
	// (0 means the schema is current); an error means the migration state
	// could not be read.
	PendingMigrations(ctx context.Context) (int, error)
}

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Readiness answers the checks of /readyz.
	Readiness Readiness
	// Gatherer is the registry /metrics exposes (the process's registry
	// built in internal/wire, with the Go and process collectors).
	Gatherer prometheus.Gatherer
	// ReadinessTimeout bounds both readiness checks together (the
	// ops.readiness_timeout key), so a probe answers in time even when the
	// database hangs.
	ReadinessTimeout time.Duration
	// Logger receives why a readiness check failed; the response only names
	// the check.
	Logger *slog.Logger
}

// Server implements the strict-server methods of the operational endpoints
// (GetHealth, GetReadiness, GetMetrics). internal/wire embeds it into the
// one apigen.StrictServerInterface it mounts.
type Server struct {
	readiness Readiness
	gatherer  prometheus.Gatherer
	timeout   time.Duration
	logger    *slog.Logger
}

// New returns a Server over deps. It fails when a dependency is missing or
// the readiness timeout is not positive, so a wiring mistake stops the
// process at start instead of failing the first probe.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Readiness == nil {
		errs = append(errs, errors.New("readiness port is nil"))
	}
	if deps.Gatherer == nil {
		errs = append(errs, errors.New("metrics gatherer is nil"))
	}
	if deps.ReadinessTimeout <= 0 {
		errs = append(errs, errors.New("readiness timeout must be positive"))
	}
	if deps.Logger == nil {
		errs = append(errs, errors.New("logger is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Server{
		readiness: deps.Readiness,
		gatherer:  deps.Gatherer,
		timeout:   deps.ReadinessTimeout,
		logger:    deps.Logger,
	}, nil
}
