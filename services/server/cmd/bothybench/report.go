package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// report is everything one run measured; benchmarks.json is its JSON form.
type report struct {
	Machine  machine          `json:"machine"`
	Settings settings         `json:"settings"`
	Append   []appendResult   `json:"append"`
	Tail     latencyResult    `json:"tail"`
	Post     postResult       `json:"post_message"`
	Authz    authzResult      `json:"authz"`
	CatchUp  catchUpResult    `json:"catch_up"`
	Snapshot snapshotResult   `json:"snapshot"`
	Consumer consumerResult   `json:"consumer_catch_up"`
	Gateway  gatewayResult    `json:"gateway"`
	Ingest   ingestResult     `json:"ingest"`
	Threads  threadListResult `json:"list_channel_threads"`
	Search   searchResult     `json:"search"`
	SDK      sdkResult        `json:"sdk_cold_start"`
	Sidebar  sidebarResult    `json:"sidebar_first_render"`
	Invoke   invokeResult     `json:"invocation_delivery"`
	Targets  []target         `json:"targets"`
}

// machine is what the figures depend on.
type machine struct {
	Cores             int    `json:"cores"`
	GOMAXPROCS        int    `json:"gomaxprocs"`
	GoVersion         string `json:"go_version"`
	OS                string `json:"os"`
	PostgresVersion   string `json:"postgres_version"`
	Fsync             string `json:"fsync"`
	SynchronousCommit string `json:"synchronous_commit"`
	WalSyncMethod     string `json:"wal_sync_method"`
	Date              string `json:"date"`
	// Kernel is what a round trip between processes costs here (kernelFacts).
	Kernel kernelFacts `json:"kernel"`
}

// settings are the run's flags.
type settings struct {
	Duration       string `json:"duration_per_case"`
	Warmup         string `json:"warmup_per_case"`
	Rate           int    `json:"latency_rate_events_per_second"`
	LatencyWriters int    `json:"latency_writers"`
	// AppendConcurrency is sync.append_concurrency: the appender's admission limit per process.
	// The bare loop has no admission.
	AppendConcurrency int `json:"append_concurrency"`
}

// appendResult is one append case: the appender and the bare loop with the same writers and
// events per transaction.
type appendResult struct {
	Writers                 int     `json:"writers"`
	EventsPerTx             int     `json:"events_per_transaction"`
	EventsPerSecond         float64 `json:"events_per_second"`
	BaselineEventsPerSecond float64 `json:"baseline_events_per_second"`
	Ratio                   float64 `json:"ratio"`
	Transactions            int64   `json:"transactions"`
	BaselineTransactions    int64   `json:"baseline_transactions"`
}

// latencyResult is the tail latency case, in milliseconds.
type latencyResult struct {
	RequestedRate int     `json:"requested_rate"`
	AchievedRate  float64 `json:"achieved_rate"`
	Skipped       int64   `json:"skipped_ticks"`
	Samples       int     `json:"samples"`
	BareSamples   int     `json:"bare_samples"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	// FromWrite* time the same events from occurred_at instead of the commit's return.
	FromWriteP50Ms float64 `json:"from_occurred_at_p50_ms"`
	FromWriteP99Ms float64 `json:"from_occurred_at_p99_ms"`
	BareP50Ms      float64 `json:"bare_p50_ms"`
	BareP99Ms      float64 `json:"bare_p99_ms"`
	IdleBareP50Ms  float64 `json:"idle_bare_p50_ms"`
	IdleBareP99Ms  float64 `json:"idle_bare_p99_ms"`
	P50Ratio       float64 `json:"p50_ratio"`
	P99Ratio       float64 `json:"p99_ratio"`
}

// target is one acceptance target of an issue (3, 5, 6, 7, 13, 14 or 15) and whether this run
// meets it.
type target struct {
	Name string `json:"name"`
	// Value is the figure the target is about (for the append targets, the appender's).
	Value float64 `json:"value"`
	// Baseline is the same quotient for the bare loop, where there is one (writer scaling),
	// so a reader can tell the appender's cost from the database's. It is for comparison
	// only: the bare loop has no admission.
	Baseline float64 `json:"baseline,omitempty"`
	Limit    string  `json:"limit"`
	Pass     bool    `json:"pass"`
}

// evaluate checks the acceptance targets: at 16 writers the appender reaches 0.85 of the
// baseline, and the appender with 16 writers is not slower than the appender with 1 writer
// (for each batch size measured); postMessage over HTTP with a thread per client reaches 0.6
// of the bare loop with as many writers and one event per transaction; and the tail's p99 is
// at most 5 times the bare round trip's.
func (r *report) evaluate() {
	r.Targets = nil
	find := func(w, k int) (appendResult, bool) {
		for _, a := range r.Append {
			if a.Writers == w && a.EventsPerTx == k {
				return a, true
			}
		}
		return appendResult{}, false
	}
	for _, a := range r.Append {
		if a.Writers != 16 {
			continue
		}
		r.Targets = append(r.Targets, target{
			Name:  fmt.Sprintf("append, 16 writers x %d events/tx: appender / bare loop", a.EventsPerTx),
			Value: a.Ratio, Limit: ">= 0.85", Pass: a.Ratio >= 0.85,
		})
		if one, ok := find(1, a.EventsPerTx); ok {
			r.Targets = append(r.Targets, target{
				Name:     fmt.Sprintf("append, %d events/tx: appender 16 writers / appender 1 writer", a.EventsPerTx),
				Value:    round2(a.EventsPerSecond / one.EventsPerSecond),
				Baseline: round2(a.BaselineEventsPerSecond / one.BaselineEventsPerSecond),
				Limit:    ">= 1", Pass: a.EventsPerSecond >= one.EventsPerSecond,
			})
		}
	}
	for _, c := range r.Post.Cases {
		if c.Name != postOwnThreads {
			continue
		}
		r.Targets = append(r.Targets, target{
			Name:  fmt.Sprintf("postMessage over HTTP, %d clients, %s: requests/s / bare loop events/s (%d writers x 1 event/tx)", r.Post.Clients, c.Name, r.Post.Clients),
			Value: c.Ratio, Limit: ">= 0.6", Pass: c.Ratio >= 0.6,
		})
	}
	if r.Tail.Samples > 0 {
		r.Targets = append(r.Targets, target{
			Name:  "tail p99 / bare NOTIFY round trip p99",
			Value: r.Tail.P99Ratio, Limit: "<= 5", Pass: r.Tail.P99Ratio <= 5,
		})
	}
	r.evaluateSync()
	r.Targets = append(r.Targets, r.Gateway.targets()...)
	r.Targets = append(r.Targets, r.Search.targets()...)
	if s := r.SDK; s.Requests > 0 {
		r.Targets = append(r.Targets, target{
			Name:  fmt.Sprintf("SDK cold start for Sam (%d channels, %d requests): p50 / bare fetch loop of the same requests p50", s.VisibleChannels, s.Requests),
			Value: s.Ratio, Limit: "<= 1.3", Pass: s.Ratio <= 1.3,
		})
	}
	r.Targets = append(r.Targets, r.Invoke.targets()...)
}

// evaluateSync checks the targets of issue 6: a catch-up page of the owner and of the reader
// of 10% of the channels at most 1.5 times the bare range read of the same rows at p50 and
// 2.5 times at p99, and the one-channel reader's page at most twice the owner's (p50); the
// full catch-up over HTTP at least 100,000 events/s and half the bare read loop; the snapshot
// at most 1.3 times its component queries issued bare at p50, in at most 300 bytes per
// visible channel.
func (r *report) evaluateSync() {
	var everything, one pageCase
	for _, p := range r.CatchUp.Pages {
		switch p.Reader {
		case readerEverything, readerTenth:
			r.Targets = append(r.Targets,
				target{Name: "catch-up page, " + p.Reader + ": p50 / bare range read p50", Value: p.P50Ratio, Limit: "<= 1.5", Pass: p.P50Ratio <= 1.5},
				target{Name: "catch-up page, " + p.Reader + ": p99 / bare range read p99", Value: p.P99Ratio, Limit: "<= 2.5", Pass: p.P99Ratio <= 2.5},
			)
			if p.Reader == readerEverything {
				everything = p
			}
		case readerOne:
			one = p
		}
	}
	if everything.P50Ms > 0 && one.P50Ms > 0 {
		v := round2(one.P50Ms / everything.P50Ms)
		r.Targets = append(r.Targets, target{Name: "catch-up page p50, " + readerOne + " / " + readerEverything, Value: v, Limit: "<= 2", Pass: v <= 2})
	}
	if f := r.CatchUp.Full; f.Events > 0 {
		r.Targets = append(r.Targets,
			target{Name: fmt.Sprintf("full catch-up over HTTP of %d events: events/s", f.Events), Value: f.EventsPerSecond, Limit: ">= 100000", Pass: f.EventsPerSecond >= 100_000},
			target{Name: "full catch-up over HTTP: events/s / bare read loop events/s", Value: f.Ratio, Limit: ">= 0.5", Pass: f.Ratio >= 0.5},
		)
	}
	if s := r.Snapshot; s.Requests > 0 {
		r.Targets = append(r.Targets,
			target{Name: fmt.Sprintf("snapshot (%d channels, %d unread threads, gzip): p50 / bare component queries p50", s.VisibleChannels, s.UnreadThreads), Value: s.P50Ratio, Limit: "<= 1.3", Pass: s.P50Ratio <= 1.3},
			target{Name: "snapshot: response bytes per visible channel (on the wire, Accept-Encoding: gzip)", Value: s.BytesPerChannel, Limit: "<= 300", Pass: s.BytesPerChannel <= 300},
		)
	}
	if c := r.Consumer; c.Events > 0 {
		r.Targets = append(r.Targets,
			target{Name: fmt.Sprintf("consumer catch-up of an agent %d events behind (an ack at most every %.0f ms): events/s / the same agent's REST catch-up events/s", c.Events, c.AckEveryMs), Value: c.Ratio, Limit: ">= 0.9", Pass: c.Ratio >= 0.9})
	}
	if l := r.Threads; l.Requests > 0 {
		r.Targets = append(r.Targets,
			target{Name: fmt.Sprintf("listChannelThreads (first page of %d threads): p50 / bare statements p50", l.Threads), Value: l.P50Ratio, Limit: "<= 1.5", Pass: l.P50Ratio <= 1.5})
	}
}

// markdown renders the report as docs/benchmarks.md.
func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.Machine
	w("# Benchmarks\n\n")
	w("Written by `make bench` (`services/server/cmd/bothybench`); do not edit by hand. Every figure\n")
	w("is measured beside its baseline in the same run on a throwaway PostgreSQL cluster, so the\n")
	w("ratio (figure / baseline) holds on a noisy machine better than either number.\n\n")
	w("- Machine: %d cores (GOMAXPROCS %d), %s, %s.\n", m.Cores, m.GOMAXPROCS, m.OS, m.GoVersion)
	if k := m.Kernel.markdown(); k != "" {
		w("- Kernel: %s.\n", k)
	}
	w("- PostgreSQL %s on a throwaway cluster with its default settings:\n", m.PostgresVersion)
	w("  fsync %s, synchronous_commit %s, wal_sync_method %s.\n", m.Fsync, m.SynchronousCommit, m.WalSyncMethod)
	w("- Run of %s: each case ran %s after a %s warm-up.\n\n", m.Date, r.Settings.Duration, r.Settings.Warmup)

	if len(r.Append) > 0 {
		r.appendMarkdown(w)
	}
	if r.Tail.Samples > 0 {
		r.tailMarkdown(w)
	}
	if len(r.Post.Cases) > 0 {
		r.Post.markdown(w, r.Settings.AppendConcurrency)
	}
	if len(r.Authz.Cases) > 0 {
		r.Authz.markdown(w)
	}
	if len(r.CatchUp.Pages) > 0 {
		r.CatchUp.markdown(w)
	}
	if r.Snapshot.Requests > 0 {
		r.Snapshot.markdown(w)
	}
	if r.Consumer.Events > 0 {
		r.Consumer.markdown(w, r.CatchUp.Events)
	}
	if r.Gateway.measured() {
		r.Gateway.markdown(w)
	}
	if r.SDK.Requests > 0 {
		r.SDK.markdown(w)
	}
	if r.Sidebar.Channels > 0 {
		r.Sidebar.markdown(w)
	}
	if r.Invoke.Agents > 0 {
		r.Invoke.markdown(w)
	}
	if r.Threads.Requests > 0 {
		r.Threads.markdown(w)
	}
	if r.Ingest.Commits > 0 {
		r.Ingest.markdown(w)
	}
	if r.Search.Requests > 0 {
		r.Search.markdown(w)
	}

	w("\n## Targets\n\n")
	w("The acceptance targets of the issues the benchmark measures (3, 5, 6, 7, 13, 14 and 15;\n")
	w("issue 16 asks that no figure get worse). ")
	w("Figure: the quotient the target is about (for the append targets, the appender's); bare\n")
	w("loop: the same quotient for the bare loop (no admission), where it has one, for comparison.\n\n")
	w("| target | figure | bare loop | limit | met |\n")
	w("| --- | ---: | ---: | --- | --- |\n")
	for _, tg := range r.Targets {
		met := "yes"
		if !tg.Pass {
			met = "**no**"
		}
		base := ""
		if tg.Baseline != 0 {
			base = fmt.Sprintf("%.2f", tg.Baseline)
		}
		value := fmt.Sprintf("%.2f", tg.Value)
		if tg.Value >= 1000 {
			value = fmt.Sprintf("%.0f", tg.Value)
		}
		w("| %s | %s | %s | %s | %s |\n", tg.Name, value, base, tg.Limit, met)
	}
	r.writerScaling(w)
	return b.String()
}

// appendMarkdown renders the append section through w.
func (r *report) appendMarkdown(w func(string, ...any)) {
	w("## Append throughput\n\n")
	w("Committed events per second. Figure: the appender (`tx.Runner.RunInTx` + `kernel.Appender.Append`,\n")
	w("validation, staging, and one round trip with the counter UPDATE, the INSERT, the NOTIFY and the\n")
	w("COMMIT, ADR 0014),\n")
	w("admitting at most %d transactions of the process at once into the locked section\n", r.Settings.AppendConcurrency)
	w("(`sync.append_concurrency`, ADR 0010 \"Admission\").\n")
	w("Baseline: a bare pgx loop of the same transaction (BEGIN; UPDATE the event_seq counter\n")
	w("RETURNING its value; INSERT the events; COMMIT) with the same writers and events per\n")
	w("transaction, without admission. After a warm-up of every case, the cases run in four rounds,\n")
	w("each giving every case a quarter of its time, baseline then appender, so drift on the machine\n")
	w("hits every figure alike. Higher is better; with many writers the appender can beat the bare\n")
	w("loop, by its admission.\n\n")
	w("| writers | events/tx | appender events/s | bare loop events/s | ratio |\n")
	w("| ---: | ---: | ---: | ---: | ---: |\n")
	for _, a := range r.Append {
		w("| %d | %d | %.0f | %.0f | %.2f |\n", a.Writers, a.EventsPerTx, a.EventsPerSecond, a.BaselineEventsPerSecond, a.Ratio)
	}

}

// tailMarkdown renders the tail latency section through w.
func (r *report) tailMarkdown(w func(string, ...any)) {
	t := r.Tail
	w("\n## Tail latency\n\n")
	w("Figure: commit-to-subscriber latency of the log tail, from the moment the writer's commit\n")
	w("returned (the transaction is visible and its NOTIFY queued) to the moment a subscriber\n")
	w("received the event, while writers append %d events/s (one event per transaction; %.0f/s\n", t.RequestedRate, t.AchievedRate)
	w("achieved, %d ticks skipped). Baseline: a bare LISTEN/NOTIFY round trip (SELECT pg_notify on\n", t.Skipped)
	w("one plain connection until the other receives it), measured at the same time under the\n")
	w("same load. Lower is better; the ratio is figure / baseline.\n\n")
	w("| percentile | tail | bare NOTIFY round trip | ratio |\n")
	w("| --- | ---: | ---: | ---: |\n")
	w("| p50 | %.2f ms | %.2f ms | %.2f |\n", t.P50Ms, t.BareP50Ms, t.P50Ratio)
	w("| p99 | %.2f ms | %.2f ms | %.2f |\n", t.P99Ms, t.BareP99Ms, t.P99Ratio)
	w("\n%d tail samples, %d round trips. Timed from the event's `occurred_at` instead (the\n", t.Samples, t.BareSamples)
	w("database clock in the appender's final round trip, so the COMMIT itself counts too), the\n")
	w("tail takes %.2f ms (p50) and %.2f ms (p99). Without load the bare round trip takes\n", t.FromWriteP50Ms, t.FromWriteP99Ms)
	w("%.2f ms (p50) and %.2f ms (p99).\n", t.IdleBareP50Ms, t.IdleBareP99Ms)
}

// writerScaling explains the writer-scaling targets when the bare loop loses throughput from
// 1 to 16 writers, which it does on a small machine: why, and how the appender avoids it, or
// that it did not this time.
func (r *report) writerScaling(w func(string, ...any)) {
	bareLoses, appenderFails := false, false
	for _, tg := range r.Targets {
		if tg.Baseline != 0 && tg.Baseline < 1 {
			bareLoses = true
			appenderFails = appenderFails || !tg.Pass
		}
	}
	if !bareLoses {
		return
	}
	w("\nWriter scaling: commits are serialized, since every transaction holds the event_seq row lock\n")
	w("from its UPDATE until its COMMIT is durable. A single writer leaves the lock free only between\n")
	w("its transactions (the reply to its COMMIT, its own work, its BEGIN and its next statements on\n")
	w("their way to the server), so more writers can gain at most that share: little with one event\n")
	w("per transaction, more with ten. The bare loop even loses throughput from 1 to 16 writers:\n")
	w("each extra writer adds a backend that waits in PostgreSQL's lock manager and is woken at every\n")
	w("commit, on top of the CPU the writers share with the database. The appender admits at most %d\n", r.Settings.AppendConcurrency)
	w("transactions of the process at once into the locked section, so the other writers wait in the\n")
	w("process instead")
	if appenderFails {
		w("; on this run that was not enough to meet every writer-scaling\ntarget.\n")
		return
	}
	w(", and it keeps its 1-writer throughput or better with 16 writers.\n")
}

// write stores md and the report's JSON in dir.
func (r *report) write(dir, md string) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	//nolint:gosec // G306: documentation files, readable by everyone on purpose.
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write benchmarks.md: %w", err)
	}
	//nolint:gosec // G306: documentation files, readable by everyone on purpose.
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write benchmarks.json: %w", err)
	}
	return nil
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
func round2(f float64) float64 { return math.Round(f*100) / 100 }
