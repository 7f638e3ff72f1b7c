package logbench

import (
	"fmt"
	"strings"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// TestPostMessageTarget checks the postMessage target: 0.6 of the bare loop for the layout
// with a thread per client, nothing for the shared thread, and the section's table.
func TestPostMessageTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ratio float64
		pass  bool
	}{{0.59, false}, {0.6, true}, {1.3, true}} {
		r := bench.Report{Sections: []bench.Section{PostResult{Clients: 16, Rounds: 4, BaselineEventsPerSecond: 1800, Cases: []postCase{
			{Name: postOwnThreads, Threads: 16, Requests: 9000, RequestsPerSecond: 1800 * tc.ratio, P50Ms: 8.5, P99Ms: 21.25, Ratio: tc.ratio},
			{Name: postSharedThread, Threads: 1, Requests: 2000, RequestsPerSecond: 400, P50Ms: 40, P99Ms: 60, Ratio: 0.22},
		}}}}
		r.Order(nil)
		if len(r.Targets) != 1 {
			t.Fatalf("targets = %+v, want the one of the thread-per-client layout", r.Targets)
		}
		tg := r.Targets[0]
		if !strings.Contains(tg.Name, postOwnThreads) || tg.Value != tc.ratio || tg.Limit != ">= 0.6" || tg.Pass != tc.pass {
			t.Fatalf("ratio %.2f: target = %+v, want pass %v", tc.ratio, tg, tc.pass)
		}
		md := r.Markdown()
		for _, want := range []string{
			"| one thread per client (16) | " + fmt.Sprintf("%.0f", 1800*tc.ratio) + " | 8.50 ms | 21.25 ms | 1800 | " + fmt.Sprintf("%.2f", tc.ratio) + " |",
			"| one shared thread (1) | 400 | 40.00 ms | 60.00 ms | 1800 | 0.22 |",
			"| >= 0.6 |",
		} {
			if !strings.Contains(md, want) {
				t.Fatalf("markdown lacks %q:\n%s", want, md)
			}
		}
		if note := strings.Contains(md, "A figure above its baseline"); note != (tc.ratio > 1) {
			t.Fatalf("ratio %.2f: note on a figure above its baseline = %v", tc.ratio, note)
		}
	}
}
