package chatbench

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

// TestSearchSmoke runs the search case for a few milliseconds in a small world: not a
// measurement, a check that the world seeds, that HTTP and the bare SQL give the same answer
// (measureSearch compares them) and that the report has its section and target.
func TestSearchSmoke(t *testing.T) {
	t.Parallel()
	o := bench.Options{
		Duration: 200 * time.Millisecond, SyncChannels: 20, SearchMessages: 5000,
		Cases: map[string]bool{"search": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Search{}}, o, false)
	// Steps: the world's three, the first pass and four rounds.
	if len(steps) != 8 {
		t.Fatalf("%d steps, want 8: %q", len(steps), steps)
	}
	s := bench.ReportSection[SearchResult](rep)
	if s.Messages != 5000 || s.Channels != 20 || s.Threads != 200 || s.VisibleChannels != 2 || s.Queries != searchQueries ||
		s.MatchesPerQuery <= 0 || s.HitsPerPage <= 0 || s.Requests == 0 || s.BaselineReads == 0 ||
		s.P50Ms <= 0 || s.P99Ms < s.P50Ms || s.BaselineP50Ms <= 0 || s.P50Ratio <= 0 {
		t.Fatalf("search result = %+v", s)
	}
	md := rep.Markdown()
	if !strings.Contains(md, "## Message search") || !strings.Contains(md, "searchMessages over HTTP, 5,000 messages") {
		t.Fatalf("the report lacks the search section or its target:\n%s", md)
	}
}
