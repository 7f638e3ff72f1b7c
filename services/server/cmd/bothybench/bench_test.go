package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m, wire.Migrations()...)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestBenchSmoke runs every case of the benchmark for a few milliseconds on a pgtest
// database: not a measurement, a check that the code paths work and the report is complete.
func TestBenchSmoke(t *testing.T) {
	t.Parallel()
	o := options{
		duration:  200 * time.Millisecond,
		warmup:    20 * time.Millisecond,
		writers:   []int{1, 16},
		batches:   []int{1, 10},
		rate:      200,
		latWriter: 2,
		authzTime: 10 * time.Millisecond,
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var steps []string
	rep, err := measure(t.Context(), o, pgtest.URL(t), logger, func(format string, _ ...any) { steps = append(steps, format) })
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	// Steps: the warm-up, four rounds, the tail, postMessage's set-up and four rounds,
	// authorization.
	if len(rep.Append) != 4 || len(steps) != 12 {
		t.Fatalf("%d append cases and %d steps, want 4 and 12", len(rep.Append), len(steps))
	}
	for _, a := range rep.Append {
		if a.EventsPerSecond <= 0 || a.BaselineEventsPerSecond <= 0 || a.Ratio <= 0 || a.Transactions == 0 || a.BaselineTransactions == 0 {
			t.Fatalf("append case without figures: %+v", a)
		}
	}
	if tl := rep.Tail; tl.Samples == 0 || tl.BareSamples == 0 || tl.P99Ms < tl.P50Ms || tl.BareP99Ms <= 0 {
		t.Fatalf("tail case without figures: %+v", tl)
	}
	if p := rep.Post; p.Clients != 16 || p.BaselineEventsPerSecond <= 0 || p.BaselineTransactions == 0 || len(p.Cases) != 2 {
		t.Fatalf("postMessage case without figures: %+v", p)
	}
	for _, c := range rep.Post.Cases {
		if c.Requests == 0 || c.RequestsPerSecond <= 0 || c.P50Ms <= 0 || c.P99Ms < c.P50Ms || c.Ratio <= 0 {
			t.Fatalf("postMessage layout without figures: %+v", c)
		}
	}
	if len(rep.Targets) != 6 {
		t.Fatalf("targets = %+v, want 6 (two per batch size, postMessage's and the tail's)", rep.Targets)
	}
	if rep.Settings.AppendConcurrency != 2 {
		t.Fatalf("append concurrency = %d, want sync.append_concurrency's default 2", rep.Settings.AppendConcurrency)
	}
	if a := rep.Authz; a.ChannelGrants != 1000 || len(a.Cases) != 3 {
		t.Fatalf("authorization cases = %+v, want 3 on 1000 channel grants", a)
	}
	for _, c := range rep.Authz.Cases {
		if c.NsPerOp <= 0 || c.BaselineNsPerOp <= 0 || c.Ratio <= 0 {
			t.Fatalf("authorization case without figures: %+v", c)
		}
	}
	if rep.Machine.Cores < 1 || rep.Machine.PostgresVersion == "" || rep.Machine.Fsync == "" {
		t.Fatalf("machine facts missing: %+v", rep.Machine)
	}

	dir := t.TempDir()
	md := rep.markdown()
	if err := rep.write(dir, md); err != nil {
		t.Fatalf("write: %v", err)
	}
	for _, want := range []string{"# Benchmarks", "## Append throughput", "| 16 | 10 |", "## Tail latency", "| p99 |", "## Authorization", "| Scope build, 1000 channel grants |", "## postMessage over HTTP", "| one thread per client (16) |", "| one shared thread (1) |", "## Targets", "appender 16 writers / appender 1 writer", "postMessage over HTTP, 16 clients"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "benchmarks.json")) //nolint:gosec // the test's own temporary directory.
	if err != nil {
		t.Fatalf("read json: %v", err)
	}
	var back report
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Append) != 4 || len(back.Post.Cases) != 2 {
		t.Fatalf("benchmarks.json does not hold the report: %v", err)
	}
}

// TestPostMessageTarget checks the postMessage target: 0.6 of the bare loop for the layout
// with a thread per client, nothing for the shared thread, and the section's table.
func TestPostMessageTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ratio float64
		pass  bool
	}{{0.59, false}, {0.6, true}, {1.3, true}} {
		r := report{Post: postResult{Clients: 16, Rounds: 4, BaselineEventsPerSecond: 1800, Cases: []postCase{
			{Name: postOwnThreads, Threads: 16, Requests: 9000, RequestsPerSecond: 1800 * tc.ratio, P50Ms: 8.5, P99Ms: 21.25, Ratio: tc.ratio},
			{Name: postSharedThread, Threads: 1, Requests: 2000, RequestsPerSecond: 400, P50Ms: 40, P99Ms: 60, Ratio: 0.22},
		}}}
		r.evaluate()
		if len(r.Targets) != 1 {
			t.Fatalf("targets = %+v, want the one of the thread-per-client layout", r.Targets)
		}
		tg := r.Targets[0]
		if !strings.Contains(tg.Name, postOwnThreads) || tg.Value != tc.ratio || tg.Limit != ">= 0.6" || tg.Pass != tc.pass {
			t.Fatalf("ratio %.2f: target = %+v, want pass %v", tc.ratio, tg, tc.pass)
		}
		md := r.markdown()
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

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(options) bool
	}{
		{name: "defaults", check: func(o options) bool {
			return o.duration == 5*time.Second && len(o.writers) == 3 && len(o.batches) == 2 && o.rate == 1000 && o.out == ""
		}},
		{name: "lists", args: []string{"-writers", "2, 8", "-events", "5", "-out", "docs"}, check: func(o options) bool {
			return len(o.writers) == 2 && o.writers[1] == 8 && o.batches[0] == 5 && o.out == "docs"
		}},
		{name: "bad list", args: []string{"-writers", "1,x"}, wantErr: true},
		{name: "zero writers", args: []string{"-writers", "0"}, wantErr: true},
		{name: "zero duration", args: []string{"-duration", "0s"}, wantErr: true},
		{name: "stray argument", args: []string{"now"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseFlags(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseFlags(%v) = %v, want error %v", tc.args, err, tc.wantErr)
			}
			if tc.check != nil && !tc.check(o) {
				t.Fatalf("parseFlags(%v) = %+v", tc.args, o)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(ds, 50); p != 50*time.Millisecond {
		t.Fatalf("p50 = %v", p)
	}
	if p := percentile(ds, 99); p != 99*time.Millisecond {
		t.Fatalf("p99 = %v", p)
	}
	if p := percentile(ds[:1], 99); p != 100*time.Millisecond {
		t.Fatalf("p99 of one = %v", p)
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	if code := run(t.Context(), []string{"-writers", "none"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("run with a bad flag = %d, want 2", code)
	}
	if code := run(t.Context(), []string{"-h"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("run -h = %d, want 0", code)
	}
}
