package logbench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

// TestIngestSmoke runs the ingest case alone on a pgtest database with a repository of a few
// commits: not a measurement, a check that the repository is generated, the fresh pass writes a
// message per commit, the second pass writes nothing, and the baseline is measured.
func TestIngestSmoke(t *testing.T) {
	t.Parallel()
	const commits = 25
	o := bench.Options{
		Duration:      200 * time.Millisecond,
		Warmup:        20 * time.Millisecond,
		IngestCommits: commits,
		Cases:         map[string]bool{"ingest": true},
	}
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{Ingest{}}, o, false)
	// Steps: the repository, the baseline's first half, the fresh pass, the baseline's second
	// half, the second pass.
	if len(steps) != 5 {
		t.Fatalf("%d steps, want 5: %q", len(steps), steps)
	}
	in := bench.ReportSection[IngestResult](rep)
	f, s := in.Fresh, in.Second
	if in.Commits != commits || f.Created != commits || f.Skipped != 0 || f.Seconds <= 0 || f.ReportElapsedMS < 0 ||
		f.UntilFirstSeconds <= 0 || f.UntilFirstSeconds > f.Seconds || f.RecordsPerSecond <= 0 {
		t.Fatalf("fresh pass = %+v", f)
	}
	// One message.created per commit, besides the app principal, its grant and the branch's
	// thread.
	if f.Events < commits || f.Events > commits+5 || f.EventsPerSecond <= 0 {
		t.Fatalf("fresh pass appended %d events for %d commits: %+v", f.Events, commits, f)
	}
	// The commits cursor is HEAD after the fresh pass, so the second walks nothing.
	if s.Created != 0 || s.Skipped != 0 || s.Events != 0 || s.Seconds <= 0 {
		t.Fatalf("second pass = %+v, want nothing created and no event", s)
	}
	if in.BaselineEventsPerSecond <= 0 || in.BaselineTransactions == 0 || in.Ratio <= 0 {
		t.Fatalf("ingest baseline = %+v", in)
	}
	if len(bench.ReportSection[AppendSection](rep).Results) != 0 || bench.ReportSection[PostResult](rep).Clients != 0 || len(rep.Targets) != 0 {
		t.Fatalf("the ingest case alone ran other cases or set a target: %+v", rep)
	}
	md := rep.Markdown()
	for _, want := range []string{"## Ingest (bothy ingest git)", "| fresh |", "| second (nothing to create) |", "1 writer and 1 event per transaction"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestIngestMarkdown checks the ingest section's table and JSON for fixed figures, and that a
// report without the case has no section.
func TestIngestMarkdown(t *testing.T) {
	t.Parallel()
	r := bench.Report{Sections: []bench.Section{IngestResult{
		Commits: 5000, GenerateSeconds: 0.42,
		Fresh: ingestPass{
			Seconds: 12.5, ReportElapsedMS: 12480, UntilFirstSeconds: 0.31, Created: 5000, Events: 5003,
			RecordsPerSecond: 400, EventsPerSecond: 400.24,
		},
		Second:                  ingestPass{Seconds: 0.02, ReportElapsedMS: 15},
		BaselineEventsPerSecond: 800.6, BaselineTransactions: 2401, Ratio: 0.5,
	}}}
	r.Order(nil)
	if len(r.Targets) != 0 {
		t.Fatalf("targets = %+v, want none: spec 08 sets no target", r.Targets)
	}
	md := r.Markdown()
	for _, want := range []string{
		"## Ingest (bothy ingest git)",
		"| pass | commits | records created | records skipped | events appended | time | records/s | events/s | bare loop events/s | ratio |",
		"| fresh | 5000 | 5000 | 0 | 5003 | 12.50 s | 400 | 400 | 801 | 0.50 |",
		"| second (nothing to create) | 5000 | 0 | 0 | 0 | 0.02 s | | | | |",
		"generated in 0.42 s",
		"0.31 s of the fresh pass;\nthe rest is the 5000 transactions, 410 records/s.",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.ContainsAny(md, "\u2013\u2014") {
		t.Fatal("markdown holds an en or em dash")
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Ingest IngestResult `json:"ingest"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || back.Ingest != bench.ReportSection[IngestResult](&r) {
		t.Fatalf("JSON round trip: %v: %+v", err, back.Ingest)
	}
	for _, key := range []string{`"ingest":{"commits":5000`, `"events_appended":5003`, `"baseline_events_per_second":800.6`, `"until_first_commit_seconds":0.31`} {
		if !strings.Contains(string(raw), key) {
			t.Fatalf("JSON lacks %s: %s", key, raw)
		}
	}
	if md := (&bench.Report{}).Markdown(); strings.Contains(md, "## Ingest") {
		t.Fatalf("a report without the ingest case has its section:\n%s", md)
	}
}

// TestIngestStream checks the fast-import stream: every commit's data count is its message's
// length in bytes, each commit after the first names its parent, and the messages vary.
func TestIngestStream(t *testing.T) {
	t.Parallel()
	stream := string(ingestStream(40))
	if n := strings.Count(stream, "commit refs/heads/main\n"); n != 40 {
		t.Fatalf("%d commits in the stream, want 40", n)
	}
	if n := strings.Count(stream, "\nfrom :"); n != 39 {
		t.Fatalf("%d parents in the stream, want 39", n)
	}
	subjects := map[string]bool{}
	for i := range 40 {
		subjects[strings.SplitN(ingestMessage(i), "\n", 2)[0]] = true
	}
	if len(subjects) < 30 {
		t.Fatalf("%d distinct subjects in 40 commits", len(subjects))
	}
}
