package main

import (
	"strings"
	"testing"
	"time"
)

// TestThreadsSmoke runs the thread list case alone on a pgtest database with a small channel:
// not a measurement, a check that the channel is seeded, the first page is full and carries
// unread and mentioned threads, the baseline runs, and the report has its section and target.
func TestThreadsSmoke(t *testing.T) {
	t.Parallel()
	o := options{
		duration: 200 * time.Millisecond,
		warmup:   20 * time.Millisecond,
		threads:  500,
		cases:    map[string]bool{"threads": true},
	}
	rep, steps := smokeMeasure(t, o, false)
	// Steps: the seeding, then the measurement.
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2: %q", len(steps), steps)
	}
	l := reportSection[threadListResult](rep)
	if l.Threads != 500 || l.Items != l.PageSize || l.PageSize < 1 || l.UnreadItems == 0 || l.MentionedItems == 0 || l.Bytes == 0 {
		t.Fatalf("the first page = %+v", l)
	}
	if l.Requests == 0 || l.BaselineRuns == 0 || l.P50Ms <= 0 || l.BaselineP50Ms <= 0 || l.P99Ms < l.P50Ms || l.P50Ratio <= 0 {
		t.Fatalf("thread list case without figures: %+v", l)
	}
	if l.MinimalRequests == 0 || l.MinimalP50Ms <= 0 || l.MinimalP99Ms < l.MinimalP50Ms || l.MinimalP50Ratio <= 0 || l.OverMinimalP50 <= 0 {
		t.Fatalf("thread list case without its reference: %+v", l)
	}
	for name, c := range map[string]sideCPU{"baseline": l.BaselineCPU, "figure": l.FigureCPU, "reference": l.MinimalCPU} {
		if c.ProcessMs <= 0 || c.PostgresMs <= 0 {
			t.Fatalf("the %s's CPU per answer = %+v, want both ends measured", name, c)
		}
	}
	if len(reportSection[appendSection](rep).Results) != 0 || reportSection[postResult](rep).Clients != 0 || len(rep.Targets) != 1 {
		t.Fatalf("the thread list case alone ran other cases or set other targets: %+v", rep.Targets)
	}
	md := rep.markdown()
	for _, want := range []string{"## listChannelThreads", "| 500 | 50 |", "listChannelThreads (first page of 500 threads)", "| minimal net/http handler, same statements and bytes |", "| figure (listChannelThreads over HTTP) | "} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}
