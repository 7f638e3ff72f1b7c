package chatbench

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
	"bothy.example.com/server/cmd/bothybench/internal/logbench"
)

// TestThreadsSmoke runs the thread list case alone on a pgtest database with a small channel:
// not a measurement, a check that the channel is seeded, the first page is full and carries
// unread and mentioned threads, the baseline runs, and the report has its section and target.
// Not parallel: the CPU meter sums the test server's processes, and the search smoke test's
// sessions ending during the measurement (in this binary, on the same server) would take their
// CPU out of the sum; run first, the case has the server to itself.
func TestThreadsSmoke(t *testing.T) {
	o := bench.Options{
		Duration: 200 * time.Millisecond,
		Warmup:   20 * time.Millisecond,
		Threads:  500,
		Cases:    map[string]bool{"threads": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Threads{}}, o, false)
	// Steps: the seeding, then the measurement.
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2: %q", len(steps), steps)
	}
	l := bench.ReportSection[ThreadListResult](rep)
	if l.Threads != 500 || l.Items != l.PageSize || l.PageSize < 1 || l.UnreadItems == 0 || l.MentionedItems == 0 || l.Bytes == 0 {
		t.Fatalf("the first page = %+v", l)
	}
	if l.Requests == 0 || l.BaselineRuns == 0 || l.P50Ms <= 0 || l.BaselineP50Ms <= 0 || l.P99Ms < l.P50Ms || l.P50Ratio <= 0 {
		t.Fatalf("thread list case without figures: %+v", l)
	}
	if l.MinimalRequests == 0 || l.MinimalP50Ms <= 0 || l.MinimalP99Ms < l.MinimalP50Ms || l.MinimalP50Ratio <= 0 || l.OverMinimalP50 <= 0 {
		t.Fatalf("thread list case without its reference: %+v", l)
	}
	for name, c := range map[string]bench.SideCPU{"baseline": l.BaselineCPU, "figure": l.FigureCPU, "reference": l.MinimalCPU} {
		if c.ProcessMs <= 0 || c.PostgresMs <= 0 {
			t.Fatalf("the %s's CPU per answer = %+v, want both ends measured", name, c)
		}
	}
	if len(bench.ReportSection[logbench.AppendSection](rep).Results) != 0 || bench.ReportSection[logbench.PostResult](rep).Clients != 0 || len(rep.Targets) != 1 {
		t.Fatalf("the thread list case alone ran other cases or set other targets: %+v", rep.Targets)
	}
	md := rep.Markdown()
	for _, want := range []string{"## listChannelThreads", "| 500 | 50 |", "listChannelThreads (first page of 500 threads)", "| minimal net/http handler, same statements and bytes |", "| figure (listChannelThreads over HTTP) | "} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}
