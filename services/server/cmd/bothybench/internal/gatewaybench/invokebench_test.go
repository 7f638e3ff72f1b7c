package gatewaybench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

// TestInvokeSmoke runs the invocation delivery case with a few agents for half a second on a
// pgtest database (the agents' clients in this test binary, run again): not a measurement, a
// check that the code paths work, that every invocation reaches its agent alone with its token,
// and that the report is complete.
func TestInvokeSmoke(t *testing.T) {
	t.Parallel()
	o := bench.Options{
		Duration:  500 * time.Millisecond,
		Warmup:    100 * time.Millisecond,
		InvAgents: 4,
		InvRate:   40,
		Cases:     map[string]bool{"invoke": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Invoke{}}, o, false)
	// Steps: the world, the latency.
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2: %q", len(steps), steps)
	}
	r := bench.ReportSection[InvokeResult](rep)
	if r.Agents != 4 || r.Posters != invPosters || r.RequestedRate != 40 || r.Invocations == 0 || r.Deliveries != r.Invocations ||
		r.Missing != 0 || r.WithoutToken != 0 || r.Misaddressed != 0 || r.DrainError != "" || r.OtherFrames == 0 || r.OtherWithToken != 0 ||
		r.P50Ms < 0 || r.P99Ms < r.P50Ms || r.BareSamples == 0 || r.BareP99Ms <= 0 || r.IdleBareP99Ms <= 0 || r.BatchWindow == "" {
		t.Fatalf("invocation case = %+v", r)
	}
	// The paced probe starts at most one round trip per invRoundTripEvery in the window.
	if most := int(o.Duration/invRoundTripEvery) + 1; r.BareSamples > most || r.HotBareP99Ms <= 0 {
		t.Fatalf("%d bare round trips in %s paced at %s (at most %d), back to back p99 %.2f ms", r.BareSamples, o.Duration, invRoundTripEvery, most, r.HotBareP99Ms)
	}
	if len(rep.Targets) != 1 || !strings.HasPrefix(rep.Targets[0].Name, "invocation delivery p99 / bare NOTIFY round trip p99 (4 agents, 40 invocations/s") {
		t.Fatalf("targets = %+v, want the invocation delivery's", rep.Targets)
	}
	md := rep.Markdown()
	for _, want := range []string{
		"## Invocation delivery", "| percentile | invocation delivery | bare NOTIFY round trip | ratio |", "| p99 | ",
		fmt.Sprintf("| %d | %d | 0 | 0 | 0 |", r.Invocations, r.Deliveries), "invocation delivery p99 / bare NOTIFY round trip p99",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestInvokeTargets checks the invocation delivery target at its limits and the section's
// tables.
func TestInvokeTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                                            string
		p99Ratio, achieved                              float64
		missing, withoutToken, misaddressed, otherToken int
		pass                                            bool
		named                                           string
	}{
		{name: "at the limit", p99Ratio: 5, achieved: 47.5, pass: true},
		{name: "beyond it", p99Ratio: 5.01, achieved: 50, pass: false},
		{name: "an invocation missing", p99Ratio: 1, achieved: 50, missing: 1, named: "; 1 invocations missing"},
		{name: "a delivery without its token", p99Ratio: 1, achieved: 50, withoutToken: 2, named: "; 2 without invocation_token"},
		{name: "a delivery to another agent", p99Ratio: 1, achieved: 50, misaddressed: 3, named: "; 3 delivered to another agent"},
		{name: "another frame with a token", p99Ratio: 1, achieved: 50, otherToken: 4, named: "; 4 other frames with an invocation_token"},
		{name: "the rate not held", p99Ratio: 1, achieved: 47.4, named: " requested, 47 achieved)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := bench.Report{Sections: []bench.Section{InvokeResult{
				Agents: 100, Posters: 16, RequestedRate: 50, AchievedRate: tc.achieved, Skipped: 3,
				Invocations: 250, Deliveries: 250 - tc.missing, Missing: tc.missing, WithoutToken: tc.withoutToken, Misaddressed: tc.misaddressed,
				OtherWithToken: tc.otherToken,
				OtherFrames:    25000, BusyCores: 1.5, ServerCores: 0.9, ClientCores: 0.2, BareSamples: 900,
				P50Ms: 9, P99Ms: 4 * tc.p99Ratio, BareP50Ms: 0.2, BareP99Ms: 4, IdleBareP50Ms: 0.1, IdleBareP99Ms: 0.3,
				P50Ratio: 45, P99Ratio: tc.p99Ratio, BatchWindow: "15ms",
			}}}
			r.Order(nil)
			if len(r.Targets) != 1 {
				t.Fatalf("targets = %+v, want 1", r.Targets)
			}
			if tg := r.Targets[0]; tg.Pass != tc.pass || !strings.Contains(tg.Name, tc.named) {
				t.Fatalf("target %+v: pass %v, want %v, named with %q", tg, tg.Pass, tc.pass, tc.named)
			}
			md := r.Markdown()
			held, mark := "yes", ""
			if tc.achieved < 47.5 {
				held, mark = "no", " (load not reached)"
			}
			for _, want := range []string{
				"## Invocation delivery", "`gateway.batch_window` 15ms", "100 agents", "16 goroutines share the paced posts", "(25000 such frames",
				"| p50 | 9.00 ms | 0.20 ms | 45.00" + mark + " |",
				fmt.Sprintf("| p99 | %.2f ms | 4.00 ms | %.2f%s |", 4*tc.p99Ratio, tc.p99Ratio, mark),
				fmt.Sprintf("| %.1f | %s | 3 | 250 | %d | %d | %d | %d | 1.50, 0.90, 0.20 | 900 |", tc.achieved, held, 250-tc.missing, tc.missing, tc.withoutToken, tc.misaddressed),
				fmt.Sprintf("(%d other frames did)", tc.otherToken), "takes 0.10 ms (p50) and 0.30 ms (p99)", "| <= 5, rate held, every invocation to its agent with its token |",
			} {
				if !strings.Contains(md, want) {
					t.Fatalf("markdown lacks %q:\n%s", want, md)
				}
			}
		})
	}
}
