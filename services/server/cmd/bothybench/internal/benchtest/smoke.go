package benchtest

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

// Main runs a bench package's tests with pgtest's PostgreSQL (migrated like the server's)
// and fails them when a goroutine outlives them.
func Main(m *testing.M) int {
	code := pgtest.Main(m, wire.Migrations()...)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
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
