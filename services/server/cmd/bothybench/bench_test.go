package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/authzbench"
	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
	"bothy.example.com/server/cmd/bothybench/internal/logbench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

func TestMain(m *testing.M) { os.Exit(benchtest.Main(m)) }

// TestBenchSmoke runs every case of the benchmark for a few milliseconds on pgtest databases,
// the sync cases in a small world: not a measurement, a check that the code paths work and
// the report is complete.
func TestBenchSmoke(t *testing.T) {
	t.Parallel()
	o := bench.Options{
		Duration:     200 * time.Millisecond,
		Warmup:       20 * time.Millisecond,
		Writers:      []int{1, 16},
		Batches:      []int{1, 10},
		Rate:         200,
		LatWriter:    2,
		AuthzTime:    10 * time.Millisecond,
		SyncEvents:   3000,
		SyncChannels: 20,
		PageCursors:  10,
		Cases:        map[string]bool{},
	}
	for _, c := range caseGroups {
		// TestIngestSmoke, TestGatewaySmoke, TestThreadsSmoke, TestSearchSmoke, TestSDKSmoke,
		// TestSidebarSmoke, TestConsumerSmoke and TestInvokeSmoke run their cases alone.
		o.Cases[c] = !slices.Contains([]string{"ingest", "gateway", "threads", "search", "sdk", "sidebar", "consumer", "invoke"}, c)
	}
	rep, steps := benchtest.SmokeMeasure(t, benchCases, o, true)
	// Steps: the warm-up, four rounds, the tail, postMessage's set-up and four rounds,
	// authorization; the sync world's two, the pages' first pass and four rounds, the full
	// catch-up's two rounds, the snapshot's set-up and its rounds.
	if len(bench.ReportSection[logbench.AppendSection](rep).Results) != 4 || len(steps) != 23 {
		t.Fatalf("%d append cases and %d steps, want 4 and 23: %q", len(bench.ReportSection[logbench.AppendSection](rep).Results), len(steps), steps)
	}
	for _, a := range bench.ReportSection[logbench.AppendSection](rep).Results {
		if a.EventsPerSecond <= 0 || a.BaselineEventsPerSecond <= 0 || a.Ratio <= 0 || a.Transactions == 0 || a.BaselineTransactions == 0 {
			t.Fatalf("append case without figures: %+v", a)
		}
	}
	if tl := bench.ReportSection[logbench.LatencyResult](rep); tl.Samples == 0 || tl.BareSamples == 0 || tl.P99Ms < tl.P50Ms || tl.BareP99Ms <= 0 {
		t.Fatalf("tail case without figures: %+v", tl)
	}
	if p := bench.ReportSection[logbench.PostResult](rep); p.Clients != 16 || p.BaselineEventsPerSecond <= 0 || p.BaselineTransactions == 0 || len(p.Cases) != 2 {
		t.Fatalf("postMessage case without figures: %+v", p)
	}
	for _, c := range bench.ReportSection[logbench.PostResult](rep).Cases {
		if c.Requests == 0 || c.RequestsPerSecond <= 0 || c.P50Ms <= 0 || c.P99Ms < c.P50Ms || c.Ratio <= 0 {
			t.Fatalf("postMessage layout without figures: %+v", c)
		}
	}
	cu := bench.ReportSection[syncbench.CatchUpResult](rep)
	if cu.Events != 3000 || cu.Channels != 20 || cu.HeadSeq <= cu.Events || len(cu.Pages) != 3 {
		t.Fatalf("catch-up world = %+v", cu)
	}
	for _, p := range cu.Pages {
		if p.Pages == 0 || p.HTTPPages == 0 || p.BaselineReads == 0 || p.P50Ms <= 0 || p.HTTPP50Ms <= 0 ||
			p.BaselineP50Ms <= 0 || p.P99Ms < p.P50Ms || p.SeqsPerPage <= 0 || p.P50Ratio <= 0 {
			t.Fatalf("catch-up page without figures: %+v", p)
		}
	}
	if f := cu.Full; f.Events < cu.Events || f.Pages == 0 || f.EventsPerSecond <= 0 || f.BaselineEventsPerSecond <= 0 || f.Ratio <= 0 {
		t.Fatalf("full catch-up without figures: %+v", f)
	}
	if s := bench.ReportSection[syncbench.SnapshotResult](rep); s.VisibleChannels != 10 || s.UnreadThreads != 10*syncbench.UnreadPerChannel || s.MentionedThreads != 10 ||
		s.Requests == 0 || s.BaselineRuns == 0 || s.P50Ms <= 0 || s.BaselineP50Ms <= 0 || s.BytesPerChannel <= 0 || len(s.Parts) == 0 {
		t.Fatalf("snapshot without figures: %+v", s)
	}
	if len(rep.Targets) != 15 {
		t.Fatalf("targets = %+v, want 15 (two per batch size, postMessage's, the tail's, five of the pages, two of the full catch-up and two of the snapshot)", rep.Targets)
	}
	if rep.Settings.AppendConcurrency != 2 {
		t.Fatalf("append concurrency = %d, want sync.append_concurrency's default 2", rep.Settings.AppendConcurrency)
	}
	if a := bench.ReportSection[authzbench.AuthzResult](rep); a.ChannelGrants != 1000 || len(a.Cases) != 3 {
		t.Fatalf("authorization cases = %+v, want 3 on 1000 channel grants", a)
	}
	for _, c := range bench.ReportSection[authzbench.AuthzResult](rep).Cases {
		if c.NsPerOp <= 0 || c.BaselineNsPerOp <= 0 || c.Ratio <= 0 {
			t.Fatalf("authorization case without figures: %+v", c)
		}
	}
	if rep.Machine.Cores < 1 || rep.Machine.PostgresVersion == "" || rep.Machine.Fsync == "" {
		t.Fatalf("machine facts missing: %+v", rep.Machine)
	}

	dir := t.TempDir()
	md := rep.Markdown()
	if err := rep.Write(dir, md); err != nil {
		t.Fatalf("write: %v", err)
	}
	for _, want := range []string{"# Benchmarks", "## Append throughput", "| 16 | 10 |", "## Tail latency", "| p99 |", "## Authorization", "| Scope build, 1000 channel grants |", "## postMessage over HTTP", "| one thread per client (16) |", "| one shared thread (1) |", "## Catch-up", "| 1 channel (Robin) | 1 |", "### Full catch-up", "## Snapshot", "| unread_threads | 40 |", "## Targets", "appender 16 writers / appender 1 writer", "postMessage over HTTP, 16 clients", "snapshot: response bytes per visible channel"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "benchmarks.json")) //nolint:gosec // the test's own temporary directory.
	if err != nil {
		t.Fatalf("read json: %v", err)
	}
	var back struct {
		Append  []logbench.AppendResult `json:"append"`
		Post    logbench.PostResult     `json:"post_message"`
		CatchUp syncbench.CatchUpResult `json:"catch_up"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Append) != 4 || len(back.Post.Cases) != 2 || len(back.CatchUp.Pages) != 3 {
		t.Fatalf("benchmarks.json does not hold the report: %v", err)
	}
}
