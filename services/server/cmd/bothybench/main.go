// Command bothybench is `make bench`: it measures the event log on a throwaway PostgreSQL
// cluster and prints each figure beside a baseline measured in the same run, with their
// ratio, so the result holds on a noisy machine (spec 07).
//
// It starts a cluster from the machine's PostgreSQL binaries (pglocal) in a temporary
// directory with PostgreSQL's default durability (fsync on), migrates it with wire.Migrations,
// and measures:
//
//   - append throughput in events/s for 1, 4 and 16 writers and 1 and 10 events per
//     transaction, through the real appender (tx.Runner.RunInTx + kernel.Appender.Append),
//     against a bare loop of the same transaction in plain pgx (BEGIN; UPDATE the event_seq
//     counter RETURNING its value; INSERT the events; COMMIT);
//   - commit-to-subscriber latency (p50, p99) of the log tail while writers append 1,000
//     events/s, against a bare LISTEN/NOTIFY round trip between two plain connections under
//     the same load;
//   - postMessage over HTTP (requests/s, p50, p99): 16 clients, each with its own keep-alive
//     connection, POST messages to the wired App served on 127.0.0.1 (into a thread each, and
//     into one shared thread), against the bare loop above with 16 writers and one event per
//     transaction, measured in the same rounds;
//   - authorization (testing.Benchmark, ns/op and allocs/op): authorize with a warm Scope per
//     request against the bare permission_version read and per row (a Decider) against the
//     policy alone, and the Scope build for a principal with 1,000 channel grants against the
//     bare grant query;
//   - catch-up and the snapshot, on a second App over a database of their own in which the
//     benchmark builds a world (-sync-events generated events, default 1,000,000, in
//     -sync-channels channels, default 1,000): a catch-up page (p50, p99) through the CatchUp
//     port and over HTTP for a reader who sees everything, one who sees 10% of the channels
//     and one who sees one channel, against the bare range read of the same seq window; the
//     owner's full catch-up over HTTP (events/s) against a bare read loop; and the snapshot of
//     a person with 500 visible channels and 2,000 unread threads over HTTP (p50, p99, bytes)
//     against its component queries issued bare;
//   - the WebSocket gateway, on an App of its own with the api and gateway roles: the memory
//     of 5,000 idle connections per connection (their clients in a child process, the
//     benchmark's binary run again), commit-to-frame latency (p50, p99) with 1,000 connected
//     clients and 500 events/s against the bare LISTEN/NOTIFY round trip, and delivered event
//     frames/s to 5,000 connections against a bare broadcast server written in the benchmark;
//   - invocation delivery (ADR 0031), on an App of its own with the api and gateway roles: 100
//     agents connected to the gateway (in a child process), a person who invokes them in turn
//     at 50 invocations/s by mentioning one in a post, and the latency (p50, p99) from the
//     post's commit to the agent's invocation.requested frame with its invocation_token,
//     against the bare LISTEN/NOTIFY round trip in the same window.
//
// The consumer case (spec 03, durable consumers) builds the same sync world and measures an agent's durable
// consumer read from seq 0 to the head page by page with an ack each (events/s) against the
// same agent's REST catch-up of the same log.
//
// The search case (ADR 0024) measures searchMessages over HTTP for a reader who sees 10% of the
// channels, over a world of -search-messages messages (default 1,000,000) in -sync-channels
// channels, against the bare SQL of the same answer.
//
// The client cases (ADR 0028, ADR 0030) run in the sync world with Sam grown to the snapshot's person:
// sdk times the TypeScript SDK's cold start (snapshot, mentions, catch-up to the head) in Node
// against a bare fetch loop of the same requests, and sidebar the web client's first render of
// his sidebar in headless Chromium against a static page of the same DOM. They need Node, the
// npm packages and Chromium (make bench installs them) and fail without them.
//
// The ingest case (spec 08) times one pass of bothy ingest git over a repository of
// -ingest-commits commits (default 5,000) generated with git fast-import, and a second pass that
// creates nothing, against the bare loop with 1 writer and 1 event per transaction.
//
// It prints a Markdown table and writes docs/benchmarks.md and docs/benchmarks.json (with
// -out). A benchmark is not a test: nothing of it runs in make test but a smoke test of its
// code paths with tiny durations (the client cases' in make bench-client-test).
//
// The cases live in a package per family under internal/, each behind bench.Case, and the
// harness (the runner, the report, what the cases share to measure) in internal/bench (ADR
// 0038); this command is the flags, the cases in the order they run and the report written.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/authzbench"
	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/chatbench"
	"bothy.example.com/server/cmd/bothybench/internal/clientbench"
	"bothy.example.com/server/cmd/bothybench/internal/gatewaybench"
	"bothy.example.com/server/cmd/bothybench/internal/logbench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

func main() {
	if code, ok := gatewaybench.ClientsChildMain(); ok {
		os.Exit(code)
	}
	if spec, ok := os.LookupEnv(gatewaybench.IdleChildEnv); ok {
		os.Exit(gatewaybench.IdleChild(spec, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// benchCases are the cases in the order they run: the main App's first, then those with an
// App of their own, the sync world's in their order (the catch-up before Sam grows, the
// consumer last), and ingest last, whose Demo world bootstraps the owner when there is none.
var benchCases = []bench.Case{
	logbench.Append{}, logbench.Tail{}, logbench.Post{}, authzbench.Authz{},
	gatewaybench.Gateway{}, gatewaybench.Invoke{},
	syncbench.Sync{}, clientbench.SDK{}, clientbench.Sidebar{}, syncbench.Consumer{},
	chatbench.Threads{}, chatbench.Search{}, logbench.Ingest{},
}

// sectionOrder is the order of the report's sections (benchmarks.md and benchmarks.json).
var sectionOrder = []string{
	logbench.AppendSection{}.Key(),
	logbench.LatencyResult{}.Key(),
	logbench.PostResult{}.Key(),
	authzbench.AuthzResult{}.Key(),
	syncbench.CatchUpResult{}.Key(),
	syncbench.SnapshotResult{}.Key(),
	syncbench.ConsumerResult{}.Key(),
	gatewaybench.GatewayResult{}.Key(),
	clientbench.SdkResult{}.Key(),
	clientbench.SidebarResult{}.Key(),
	gatewaybench.InvokeResult{}.Key(),
	chatbench.ThreadListResult{}.Key(),
	logbench.IngestResult{}.Key(),
	chatbench.SearchResult{}.Key(),
}

// caseGroups are the names of the cases in the order they run.
var caseGroups = func() []string {
	names := make([]string, len(benchCases))
	for i, c := range benchCases {
		names[i] = c.Name()
	}
	return names
}()

func parseFlags(args []string, stderr io.Writer) (bench.Options, error) {
	var o bench.Options
	var writers, batches, cases string
	fs := flag.NewFlagSet("bothybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Out, "out", "", "directory to write benchmarks.md and benchmarks.json into (empty: print only)")
	fs.DurationVar(&o.Duration, "duration", 5*time.Second, "measured time of each case (each append case runs this long for the appender and again for the baseline)")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured time before each case")
	fs.StringVar(&writers, "writers", "1,4,16", "concurrent writers of the append cases")
	fs.StringVar(&batches, "events", "1,10", "events per transaction of the append cases")
	fs.IntVar(&o.Rate, "rate", 1000, "events per second written while the tail latency is measured")
	fs.IntVar(&o.LatWriter, "latency-writers", 16, "writers sharing the paced load of the latency case")
	fs.DurationVar(&o.AuthzTime, "authz-benchtime", time.Second, "testing.Benchmark time of each authorization figure and baseline")
	fs.IntVar(&o.SyncEvents, "sync-events", 1_000_000, "events the sync world's log is generated with (catch-up and snapshot cases)")
	fs.IntVar(&o.SyncChannels, "sync-channels", 1000, "channels of the sync world (at least 10)")
	fs.IntVar(&o.IngestCommits, "ingest-commits", logbench.IngestCommits, "commits of the ingest case's generated repository")
	fs.IntVar(&o.SearchMessages, "search-messages", 1_000_000, "messages of the search case's world (in -sync-channels channels)")
	fs.IntVar(&o.Threads, "threads", chatbench.ThreadListThreads, "threads of the thread list case's channel")
	fs.StringVar(&cases, "cases", strings.Join(caseGroups, ","), "case groups to run: "+strings.Join(caseGroups, ", "))
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Writers, err = intList(writers); err != nil {
		return o, fmt.Errorf("-writers: %w", err)
	}
	if o.Batches, err = intList(batches); err != nil {
		return o, fmt.Errorf("-events: %w", err)
	}
	if o.Duration <= 0 || o.Warmup < 0 || o.Rate < 1 || o.LatWriter < 1 || o.AuthzTime <= 0 {
		return o, errors.New("-duration, -rate, -latency-writers and -authz-benchtime must be positive, -warmup not negative")
	}
	if o.SyncChannels < syncbench.PageShare || o.SyncEvents < o.SyncChannels*syncbench.ThreadsPerChannel {
		return o, fmt.Errorf("-sync-channels must be at least %d and -sync-events at least %d per channel", syncbench.PageShare, syncbench.ThreadsPerChannel)
	}
	if o.IngestCommits < 1 {
		return o, errors.New("-ingest-commits must be positive")
	}
	if o.SearchMessages < o.SyncChannels*syncbench.ThreadsPerChannel {
		return o, fmt.Errorf("-search-messages must be at least %d per channel", syncbench.ThreadsPerChannel)
	}
	if o.Threads < 1 {
		return o, errors.New("-threads must be positive")
	}
	o.PageCursors = syncbench.PageCursors
	o.ClientRounds = clientbench.ClientRounds
	o.GwLatencyConns, o.GwRate, o.GwFanoutConns, o.GwIdleConns = gatewaybench.GwLatencyConns, gatewaybench.GwRate, gatewaybench.GwFanoutConns, gatewaybench.GwIdleConns
	o.InvAgents, o.InvRate = gatewaybench.InvAgents, gatewaybench.InvRate
	o.Cases = map[string]bool{}
	for f := range strings.SplitSeq(cases, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(caseGroups, f) {
			return o, fmt.Errorf("-cases: unknown case group %q (known: %s)", f, strings.Join(caseGroups, ", "))
		}
		o.Cases[f] = true
	}
	return o, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a list of positive integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// run is main without the process; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := runBench(ctx, o, stdout, logger); err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench: %v\n", err)
		return 1
	}
	return 0
}

// bench starts the throwaway cluster, measures, prints and writes the report, and removes
// the cluster.
func runBench(ctx context.Context, o bench.Options, stdout io.Writer, logger *slog.Logger) (err error) {
	_, _ = fmt.Fprintln(stdout, "bothybench: starting a throwaway PostgreSQL cluster (default settings, fsync on)")
	c, err := bench.StartCluster(ctx, logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.Stop(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = cerr
		}
	}()
	progress := func(format string, args ...any) {
		_, _ = fmt.Fprintf(stdout, "bothybench: "+format+"\n", args...)
	}
	syncURL, err := c.CreateDatabase(ctx, bench.SyncDatabase)
	if err != nil {
		return err
	}
	rep, err := bench.Measure(ctx, benchCases, sectionOrder, o, c.URL, syncURL, logger, progress)
	if err != nil {
		return err
	}
	md := rep.Markdown()
	_, _ = fmt.Fprintf(stdout, "\n%s", md)
	if o.Out == "" {
		return nil
	}
	return rep.Write(o.Out, md)
}
