package syncbench

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

// TestConsumerSmoke runs the consumer case alone on a pgtest database in a small sync world:
// not a measurement, a check that the agent's consumer reads the whole log from seq 0 with an
// ack per page, delivers what its REST catch-up delivers (the case fails otherwise), and that
// the report has its section and target.
func TestConsumerSmoke(t *testing.T) {
	t.Parallel()
	o := bench.Options{
		Duration:     200 * time.Millisecond,
		Warmup:       20 * time.Millisecond,
		SyncEvents:   3000,
		SyncChannels: 20,
		PageCursors:  10,
		Cases:        map[string]bool{"consumer": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Consumer{}}, o, true)
	// Steps: the sync world's two, Sam grown to the snapshot's person, then the consumer's rounds.
	if len(steps) != 3+consumerRounds {
		t.Fatalf("%d steps, want %d: %q", len(steps), 3+consumerRounds, steps)
	}
	c := bench.ReportSection[ConsumerResult](rep)
	// Every generated event lies in a channel of a space the agent may read.
	// The figure's agent acknowledges on a timer (the last page of every stretch always), the
	// other every page.
	if c.Events < 3000 || c.Pages < 2 || c.Acks < consumerSegments || c.Acks > c.Pages || c.EveryPageAcks != c.Pages ||
		c.AckEveryMs != bench.Ms(consumerAckEvery) || c.Rounds != consumerRounds || c.Segments != consumerSegments || c.Spaces == 0 {
		t.Fatalf("the consumer case = %+v", c)
	}
	if c.EventsPerSecond <= 0 || c.BaselineEventsPerSecond <= 0 || c.Ratio <= 0 || c.EveryPageEventsPerSecond <= 0 || c.EveryPageRatio <= 0 {
		t.Fatalf("the consumer case without figures: %+v", c)
	}
	if len(bench.ReportSection[CatchUpResult](rep).Pages) != 0 || bench.ReportSection[SnapshotResult](rep).Requests != 0 || len(rep.Targets) != 1 {
		t.Fatalf("the consumer case alone ran the sync cases or set other targets: %+v", rep.Targets)
	}
	md := rep.Markdown()
	for _, want := range []string{"## Consumer catch-up", "consumer events/s", "consumer catch-up of an agent"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestConsumerTarget checks the consumer target at its limit (0.9 of the REST catch-up).
func TestConsumerTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ratio float64
		pass  bool
	}{{0.9, true}, {1.2, true}, {0.89, false}} {
		r := bench.Report{Sections: []bench.Section{ConsumerResult{Spaces: 100, Events: 1_000_000, Pages: 2000, Acks: 2000, Rounds: 2, Segments: 10,
			EventsPerSecond: 90_000, BaselineEventsPerSecond: 100_000, Ratio: tc.ratio}}}
		r.Order(nil)
		if len(r.Targets) != 1 || r.Targets[0].Pass != tc.pass || r.Targets[0].Limit != ">= 0.9" {
			t.Fatalf("ratio %v: targets %+v, want one passing %v", tc.ratio, r.Targets, tc.pass)
		}
		if md := r.Markdown(); !strings.Contains(md, "| 1000000 | 2000 | 2000 | 90000 | 100000 |") {
			t.Fatalf("markdown lacks the consumer row:\n%s", md)
		}
	}
}
