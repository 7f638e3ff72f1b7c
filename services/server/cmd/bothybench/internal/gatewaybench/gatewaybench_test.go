package gatewaybench

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

// TestGatewaySmoke runs the gateway cases with a few connections for a few hundred
// milliseconds on a pgtest database (the idle case's clients in this test binary, run again):
// not a measurement, a check that the code paths work and the report is complete.
func TestGatewaySmoke(t *testing.T) {
	t.Parallel()
	o := bench.Options{
		Duration:       300 * time.Millisecond,
		Warmup:         100 * time.Millisecond,
		LatWriter:      2,
		GwLatencyConns: 12,
		GwRate:         100,
		GwFanoutConns:  20,
		GwIdleConns:    10,
		Cases:          map[string]bool{"gateway": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Gateway{}}, o, false)
	// Steps: the world, the idle memory, the latency, the revocation, the fan-out.
	if len(steps) != 5 {
		t.Fatalf("%d steps, want 5: %q", len(steps), steps)
	}
	g := bench.ReportSection[GatewayResult](rep)
	if g.SendBuffer < 1 || g.TailBatchSize < 1 || g.HeartbeatInterval != gwHeartbeat.String() {
		t.Fatalf("gateway settings = %+v", g)
	}
	for _, l := range []gatewayLatency{g.Latency, g.LatencyReference} {
		if l.Connections != 12 || l.Principals != 2 || l.Events == 0 || l.Deliveries != l.Events*l.Connections || l.Missing != 0 ||
			l.P50Ms < 0 || l.P99Ms < l.P50Ms || l.BareSamples == 0 || l.BareP99Ms <= 0 || l.IdleBareP99Ms <= 0 || l.DrainError != "" {
			t.Fatalf("latency case = %+v", l)
		}
	}
	if g.Latency.RequestedRate != 100 || g.LatencyReference.RequestedRate != 20 {
		t.Fatalf("latency rates %d and %d, want 100 and a fifth of it", g.Latency.RequestedRate, g.LatencyReference.RequestedRate)
	}
	if v := g.Revocation; v.Connections != 12 || v.Revoked != 2 || v.Closed != 2 || v.Missing != 0 || v.P99Ms <= 0 || v.P99Ms < v.P50Ms ||
		v.BaselineEvents != gwBaselineEvents || v.BaselineP99Ms <= 0 || v.MaxDelay == "" {
		t.Fatalf("revocation case = %+v", v)
	}
	t.Logf("revocation case: %+v", g.Revocation)
	f := g.Fanout
	if f.Connections != 20 || f.Rounds != gwFanoutRounds || f.Frames <= 0 || f.FramesPerSecond <= 0 || f.BareFrames <= 0 || f.BareFramesPerSecond <= 0 ||
		f.FrameBytes < len(eventPrefix) || f.Transactions == 0 || f.Ratio <= 0 {
		t.Fatalf("fan-out case = %+v", f)
	}
	// The memory figures are the whole process's, and the other tests of this binary run in
	// parallel: only the count is checked here.
	if i := g.Idle; i.Connections != 10 {
		t.Fatalf("idle memory case = %+v", i)
	}
	if len(rep.Targets) != 3 {
		t.Fatalf("targets = %+v, want the gateway's 3", rep.Targets)
	}
	md := rep.Markdown()
	for _, want := range []string{"## WebSocket gateway", "### Commit-to-frame latency", "| p99 |", "| Go scheduler latency, server process (p50, p99) |", "### Fan-out", "| 20 |", "### Memory per idle connection", "### Revocation delay", "| revocation p99 |", "gateway memory per idle connection (10 connections), KiB"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestGatewayTargets checks the gateway's targets at their limits and the section's tables.
func TestGatewayTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		p99Ratio    float64
		achieved    float64
		missing     int
		fanoutRatio float64
		kib         float64
		pass        []bool
	}{
		{name: "at the limits", p99Ratio: 5, achieved: 475, fanoutRatio: 0.5, kib: 16, pass: []bool{true, true, true}},
		{name: "beyond them", p99Ratio: 5.01, achieved: 500, fanoutRatio: 0.49, kib: 16.01, pass: []bool{false, false, false}},
		{name: "a delivery missing", p99Ratio: 1, achieved: 500, missing: 1, fanoutRatio: 1, kib: 1, pass: []bool{false, true, true}},
		{name: "the rate not held", p99Ratio: 1, achieved: 474, fanoutRatio: 1, kib: 1, pass: []bool{false, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := bench.Report{Sections: []bench.Section{GatewayResult{
				SendBuffer: 64, TailBatchSize: 500, HeartbeatInterval: "1h0m0s",
				Latency: gatewayLatency{Connections: 1000, Principals: 2, Writers: 16, RequestedRate: 500, AchievedRate: tc.achieved, Skipped: 7,
					BusyCores: 1.9, ServerCores: 1.1, ClientCores: 0.6, SchedP50Ms: 0.25, SchedP99Ms: 8.39, ServerRunWait: 0.4, ClientRunWait: 0.2,
					Events: 1500, Deliveries: 1_500_000 - tc.missing, Missing: tc.missing, BareSamples: 2000,
					P50Ms: 2.5, P99Ms: 5 * tc.p99Ratio, BareP50Ms: 0.5, BareP99Ms: 5, P50Ratio: 5, P99Ratio: tc.p99Ratio},
				LatencyReference: gatewayLatency{Connections: 1000, Principals: 2, Writers: 16, RequestedRate: 100, AchievedRate: 100,
					Events: 300, Deliveries: 300_000, BareSamples: 2000, P50Ms: 1, P99Ms: 3, BareP50Ms: 0.1, BareP99Ms: 1, P50Ratio: 10, P99Ratio: 3},
				Fanout: gatewayFanout{BusyCores: 1.98, BareBusyCores: 2, ServerCores: 0.9, ClientCores: 0.8, BareServerCores: 0.7, BareClientCores: 1.1, Connections: 5000, EventsPerTx: 10, Window: 8, Rounds: 2, Transactions: 300, FrameBytes: 835,
					Frames: 1_000_000, FramesPerSecond: 400_000 * tc.fanoutRatio, BareFrames: 1_200_000, BareFramesPerSecond: 400_000, Ratio: tc.fanoutRatio},
				Idle: gatewayIdle{Connections: 5000, HeapKiBPerConnection: tc.kib / 2, StackKiBPerConnection: tc.kib / 2, KiBPerConnection: tc.kib, GoroutinesPerConnection: 2},
			}}}
			r.Order(nil)
			if len(r.Targets) != 3 {
				t.Fatalf("targets = %+v, want 3", r.Targets)
			}
			for i, tg := range r.Targets {
				if tg.Pass != tc.pass[i] {
					t.Fatalf("target %+v: pass %v, want %v", tg, tg.Pass, tc.pass[i])
				}
			}
			if missing := strings.Contains(r.Targets[0].Name, "deliveries missing"); missing != (tc.missing > 0) {
				t.Fatalf("latency target %q names missing deliveries: %v, want %v", r.Targets[0].Name, missing, tc.missing > 0)
			}
			if achieved := strings.Contains(r.Targets[0].Name, "achieved"); achieved != (tc.achieved < 475) {
				t.Fatalf("latency target %q names the achieved rate: %v, want %v", r.Targets[0].Name, achieved, tc.achieved < 475)
			}
			md := r.Markdown()
			held, mark := "yes", ""
			if tc.achieved < 475 {
				held, mark = "no", " (load not reached)"
			}
			if notReached := strings.Contains(md, "At 500 events/s the load was not reached: the writers committed"); notReached != (tc.achieved < 475) {
				t.Fatalf("markdown says the load was not reached: %v, want %v:\n%s", notReached, tc.achieved < 475, md)
			}
			for _, want := range []string{
				"## WebSocket gateway",
				fmt.Sprintf("| 500 events/s | p99 | %.2f ms | 5.00 ms | %.2f%s |", 5*tc.p99Ratio, tc.p99Ratio, mark),
				"| 100 events/s | p99 | 3.00 ms | 1.00 ms | 3.00 |",
				fmt.Sprintf("| 500 events/s | %.1f | %s | 7 | 1500 | ", tc.achieved, held),
				" | 1.90, 1.10, 0.60 | 2000 |",
				"| 500 events/s | 0.25 ms, 8.39 ms | 0.40, 0.20 |",
				fmt.Sprintf("| 5000 | %.0f | 400000 | %.2f | 1.98, 0.90, 0.80 | 2.00, 0.70, 1.10 |", 400_000*tc.fanoutRatio, tc.fanoutRatio),
				fmt.Sprintf("| 5000 | %.2f KiB | %.2f KiB | %.2f KiB | 2.00 |", tc.kib/2, tc.kib/2, tc.kib),
				"| >= 0.5 |", "| <= 16 |", "| <= 5, rate held, every delivery |",
			} {
				if !strings.Contains(md, want) {
					t.Fatalf("markdown lacks %q:\n%s", want, md)
				}
			}
		})
	}
}

func TestHistogramMs(t *testing.T) {
	t.Parallel()
	buckets := []float64{0, 0.001, 0.002, 0.004, math.Inf(1)}
	for _, tc := range []struct {
		name   string
		counts []uint64
		p      int
		want   float64
	}{
		{name: "empty", counts: []uint64{0, 0, 0, 0}, p: 99, want: 0},
		{name: "all in the first bucket", counts: []uint64{10, 0, 0, 0}, p: 99, want: 1},
		{name: "p50 in the second", counts: []uint64{4, 2, 4, 0}, p: 50, want: 2},
		{name: "p99 in the third", counts: []uint64{90, 0, 10, 0}, p: 99, want: 4},
		{name: "the unbounded bucket gives its lower bound", counts: []uint64{0, 0, 0, 3}, p: 50, want: 4},
	} {
		var total uint64
		for _, c := range tc.counts {
			total += c
		}
		if got := histogramMs(tc.counts, buckets, total, tc.p); got != tc.want {
			t.Errorf("%s: histogramMs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProcTicksAndRunQueueWait(t *testing.T) {
	t.Parallel()
	// Burn a little CPU so that this process has ticks to count.
	deadline := time.Now().Add(30 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	if got := procTicks(os.Getpid()); got <= 0 {
		t.Fatalf("procTicks(self) = %d, want > 0", got)
	}
	if got := runQueueWait(os.Getpid()); got < 0 {
		t.Fatalf("runQueueWait(self) = %d, want >= 0", got)
	}
	if got := procTicks(-1); got != 0 {
		t.Fatalf("procTicks(-1) = %d, want 0", got)
	}
}
