package benchtest

import (
	"io"
	"log/slog"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

// Main runs a bench package's tests with pgtest's PostgreSQL (migrated like the server's)
// and fails them when a goroutine outlives them.
func Main(m *testing.M) int {
	return leaktest.Check(pgtest.Main(m, wire.Migrations()...))
}

// SmokeMeasure runs the cases of cases that o selects, with o, on a fresh pgtest database (and
// a second one for the sync world when withSync) with a discarding logger, failing the test on
// an error. It returns the report, its sections in the order they ran, and the formats of the
// progress steps, which each smoke test counts.
func SmokeMeasure(t *testing.T, cases []bench.Case, o bench.Options, withSync bool) (*bench.Report, []string) {
	t.Helper()
	syncURL := ""
	if withSync {
		syncURL = pgtest.URL(t)
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var steps []string
	rep, err := bench.Measure(t.Context(), cases, nil, o, pgtest.URL(t), syncURL, logger, func(format string, _ ...any) { steps = append(steps, format) })
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	return rep, steps
}
