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
	// Steps: the warm-up, four rounds, the tail, authorization.
	if len(rep.Append) != 4 || len(steps) != 7 {
		t.Fatalf("%d append cases and %d steps, want 4 and 7", len(rep.Append), len(steps))
	}
	for _, a := range rep.Append {
		if a.EventsPerSecond <= 0 || a.BaselineEventsPerSecond <= 0 || a.Ratio <= 0 || a.Transactions == 0 || a.BaselineTransactions == 0 {
			t.Fatalf("append case without figures: %+v", a)
		}
	}
	if tl := rep.Tail; tl.Samples == 0 || tl.BareSamples == 0 || tl.P99Ms < tl.P50Ms || tl.BareP99Ms <= 0 {
		t.Fatalf("tail case without figures: %+v", tl)
	}
	if len(rep.Targets) != 5 {
		t.Fatalf("targets = %+v, want 5 (two per batch size and the tail's)", rep.Targets)
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
	for _, want := range []string{"# Benchmarks", "## Append throughput", "| 16 | 10 |", "## Tail latency", "| p99 |", "## Authorization", "| Scope build, 1000 channel grants |", "## Targets", "appender 16 writers / appender 1 writer"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "benchmarks.json")) //nolint:gosec // the test's own temporary directory.
	if err != nil {
		t.Fatalf("read json: %v", err)
	}
	var back report
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Append) != 4 {
		t.Fatalf("benchmarks.json does not hold the report: %v", err)
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
