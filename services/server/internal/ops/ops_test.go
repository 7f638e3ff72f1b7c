package ops_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/ops"
)

// testTimeout is the readiness timeout of the tests: short, so the hanging
// database case ends quickly, and long enough for a loaded machine.
const testTimeout = 200 * time.Millisecond

func newServer(t *testing.T, r ops.Readiness, g prometheus.Gatherer) *ops.Server {
	t.Helper()
	if g == nil {
		g = prometheus.NewRegistry()
	}
	s, err := ops.New(ops.Deps{
		Readiness:        r,
		Gatherer:         g,
		ReadinessTimeout: testTimeout,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("ops.New: %v", err)
	}
	return s
}

func TestNewRejectsMissingDeps(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name string
		deps ops.Deps
	}{
		{"no readiness", ops.Deps{Gatherer: prometheus.NewRegistry(), ReadinessTimeout: time.Second, Logger: logger}},
		{"no gatherer", ops.Deps{Readiness: &fakeReadiness{}, ReadinessTimeout: time.Second, Logger: logger}},
		{"no timeout", ops.Deps{Readiness: &fakeReadiness{}, Gatherer: prometheus.NewRegistry(), Logger: logger}},
		{"no logger", ops.Deps{Readiness: &fakeReadiness{}, Gatherer: prometheus.NewRegistry(), ReadinessTimeout: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := ops.New(tc.deps); err == nil {
				t.Fatal("ops.New succeeded, want an error")
			}
		})
	}
}
