package noruns_test

import (
	"testing"

	"go.uber.org/goleak"

	"bothy.example.com/server/internal/sync/adapters/noruns"
	"bothy.example.com/server/internal/sync/app"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ app.RunSummarySource = noruns.Source{}

// TestActiveRunsIsEmpty: no run exists before the runs module, so the list is empty, never
// nil (the snapshot's active_runs is [] and never null), and a fresh slice every time.
func TestActiveRunsIsEmpty(t *testing.T) {
	t.Parallel()
	src := noruns.New()
	a, err := src.ActiveRuns(t.Context())
	if err != nil || a == nil || len(a) != 0 {
		t.Fatalf("ActiveRuns = %#v, %v; want [] and no error", a, err)
	}
	b, _ := src.ActiveRuns(t.Context())
	if cap(a) != 0 || cap(b) != 0 {
		t.Fatalf("ActiveRuns returned room to append into: caps %d and %d", cap(a), cap(b))
	}
}
