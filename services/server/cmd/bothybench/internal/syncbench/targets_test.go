package syncbench

import (
	"strings"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// TestSyncTargets checks the sync targets at their limits and the sections' tables.
func TestSyncTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		scale                 float64 // how far from the limits, below 1 meeting them
		wantPass              bool
		fullRate, fullRatio   float64
		snapshotRatio, perRow float64
	}{
		{name: "at the limits", scale: 1, wantPass: true, fullRate: 100_000, fullRatio: 0.5, snapshotRatio: 1.3, perRow: 300},
		{name: "beyond them", scale: 1.01, wantPass: false, fullRate: 99_999, fullRatio: 0.49, snapshotRatio: 1.31, perRow: 300.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The owner's and Sam's pages at 1.5 and 2.5 times their baselines (times scale),
			// Robin's at twice the owner's (times scale).
			page := func(reader string, p50 float64) pageCase {
				return pageCase{Reader: reader, VisibleChannels: 1, Pages: 10, HTTPPages: 10, BaselineReads: 10, EventsPerPage: 500, SeqsPerPage: 500,
					P50Ms: p50, P99Ms: 5 * tc.scale, BaselineP50Ms: 1, BaselineP99Ms: 2, P50Ratio: 1.5 * tc.scale, P99Ratio: 2.5 * tc.scale}
			}
			r := bench.Report{Sections: []bench.Section{
				CatchUpResult{Events: 1_000_000, Channels: 1000, PageSize: 500, ScanWindow: 5000, Pages: []pageCase{
					page(readerEverything, 1.5),
					page(ReaderTenth, 1.5),
					page(readerOne, 3*tc.scale),
				}, Full: fullResult{Events: 1_000_000, Pages: 2000, EventsPerSecond: tc.fullRate, BaselineEventsPerSecond: 200_000, Ratio: tc.fullRatio}},
				SnapshotResult{VisibleChannels: 500, UnreadThreads: 2000, Requests: 10, BaselineRuns: 10, P50Ms: 13, BaselineP50Ms: 10,
					P50Ratio: tc.snapshotRatio, BytesPerChannel: tc.perRow},
			}}
			r.Order(nil)
			if len(r.Targets) != 9 {
				t.Fatalf("targets = %+v, want 9", r.Targets)
			}
			for _, tg := range r.Targets {
				if tg.Pass != tc.wantPass {
					t.Fatalf("target %+v: pass %v, want %v", tg, tg.Pass, tc.wantPass)
				}
			}
			md := r.Markdown()
			for _, want := range []string{"## Catch-up", "`sync.catchup_max_events`", "| 1 channel (Robin) | 1 |", "## Snapshot", "| 500 | 2000 |", "| >= 100000 |"} {
				if !strings.Contains(md, want) {
					t.Fatalf("markdown lacks %q:\n%s", want, md)
				}
			}
		})
	}
}

// TestPageTail reads next_cursor and head_seq after a page's events and counts envelopes,
// whose payloads may start with a seq member of their own.
func TestPageTail(t *testing.T) {
	t.Parallel()
	body := []byte(`{"events":[{"seq":7,"id":"x","payload":{"seq": 3, "text": "{\"seq\":1}"}},{"seq":8,"payload":{}}],"next_cursor":8,"head_seq":9,"sync_epoch":"e","oldest_seq":0}` + "\n")
	next, head, err := pageTail(body)
	if err != nil || next != 8 || head != 9 {
		t.Fatalf("pageTail = %d, %d, %v", next, head, err)
	}
	if n := countEnvelopes(body); n != 2 {
		t.Fatalf("countEnvelopes = %d, want 2", n)
	}
	if _, _, err := pageTail([]byte(`{"events":[]}`)); err == nil {
		t.Fatal("pageTail of a page without next_cursor: no error")
	}
}
