package gatewaybench

import (
	"fmt"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// GatewayResult is the WebSocket gateway's cases (ADR 0016, ADR 0018).
type GatewayResult struct {
	// SendBuffer is gateway.send_buffer, BatchWindow gateway.batch_window, TailBatchSize
	// sync.tail_batch_size and HeartbeatInterval gateway.heartbeat_interval of the measured App.
	SendBuffer        int    `json:"send_buffer"`
	BatchWindow       string `json:"batch_window"`
	TailBatchSize     int    `json:"tail_batch_size"`
	HeartbeatInterval string `json:"heartbeat_interval"`
	// Cores is the machine's CPU count, for the busy cores of each case.
	Cores   int            `json:"cores"`
	Latency gatewayLatency `json:"latency"`
	// LatencyReference is the latency case at a fifth of its rate, on the same connections.
	LatencyReference gatewayLatency `json:"latency_reference"`
	Fanout           gatewayFanout  `json:"fan_out"`
	// Revocation is the revocation delay case (ADR 0020).
	Revocation gatewayRevocation `json:"revocation"`
	Idle       gatewayIdle       `json:"idle_memory"`
}

// gatewayLatency is the commit-to-frame latency case, in milliseconds.
type gatewayLatency struct {
	Connections   int     `json:"connections"`
	Principals    int     `json:"principals"`
	Writers       int     `json:"writers"`
	RequestedRate int     `json:"requested_rate"`
	AchievedRate  float64 `json:"achieved_rate"`
	Skipped       int64   `json:"skipped_ticks"`
	// Events is how many events were committed in the window, Deliveries how many of their
	// frames arrived (one per event and connection), Missing how many did not.
	Events     int    `json:"events"`
	Deliveries int    `json:"deliveries"`
	Missing    int    `json:"missing"`
	DrainError string `json:"drain_error,omitempty"`
	// BusyCores is how many of the machine's cores were busy in the window (/proc/stat),
	// ServerCores how many the benchmark's process used (the App: the gateway, its log tail
	// and the writers) and ClientCores the client process (/proc/<pid>/stat).
	BusyCores   float64 `json:"busy_cores"`
	ServerCores float64 `json:"server_cores"`
	ClientCores float64 `json:"client_cores"`
	// SchedP50Ms and SchedP99Ms are the Go scheduler's latency in the benchmark's process in
	// the window (how long a runnable goroutine, such as a writer whose commit returned,
	// waited to run); ServerRunWait and ClientRunWait are how many threads of each process
	// waited for a CPU on average (/proc/<pid>/task/*/schedstat).
	SchedP50Ms    float64 `json:"sched_p50_ms"`
	SchedP99Ms    float64 `json:"sched_p99_ms"`
	ServerRunWait float64 `json:"server_run_wait"`
	ClientRunWait float64 `json:"client_run_wait"`
	BareSamples   int     `json:"bare_samples"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	BareP50Ms     float64 `json:"bare_p50_ms"`
	BareP99Ms     float64 `json:"bare_p99_ms"`
	IdleBareP50Ms float64 `json:"idle_bare_p50_ms"`
	IdleBareP99Ms float64 `json:"idle_bare_p99_ms"`
	P50Ratio      float64 `json:"p50_ratio"`
	P99Ratio      float64 `json:"p99_ratio"`
}

// gatewayFanout is the fan-out case: delivered event frames per second, the gateway's and the
// bare broadcast server's.
type gatewayFanout struct {
	Connections         int     `json:"connections"`
	EventsPerTx         int     `json:"events_per_transaction"`
	Window              int     `json:"window_transactions"`
	Rounds              int     `json:"rounds"`
	Transactions        int64   `json:"transactions"`
	FrameBytes          int     `json:"frame_bytes"`
	Frames              int64   `json:"frames"`
	FramesPerSecond     float64 `json:"frames_per_second"`
	BareFrames          int64   `json:"bare_frames"`
	BareFramesPerSecond float64 `json:"bare_frames_per_second"`
	Ratio               float64 `json:"ratio"`
	// BusyCores and BareBusyCores are how many of the machine's cores were busy while each
	// was measured (/proc/stat); ServerCores and BareServerCores how many of them the
	// benchmark's process used (the App and its writer, or the bare broadcast server), and
	// ClientCores and BareClientCores the client process (/proc/<pid>/stat).
	BusyCores       float64 `json:"busy_cores"`
	BareBusyCores   float64 `json:"bare_busy_cores"`
	ServerCores     float64 `json:"server_cores"`
	BareServerCores float64 `json:"bare_server_cores"`
	ClientCores     float64 `json:"client_cores"`
	BareClientCores float64 `json:"bare_client_cores"`
}

// gatewayIdle is the memory of idle connections on the server's side.
type gatewayIdle struct {
	Connections           int     `json:"connections"`
	HeapBytes             int64   `json:"heap_inuse_bytes"`
	StackBytes            int64   `json:"stack_inuse_bytes"`
	BytesPerConnection    float64 `json:"bytes_per_connection"`
	KiBPerConnection      float64 `json:"kib_per_connection"`
	HeapKiBPerConnection  float64 `json:"heap_kib_per_connection"`
	StackKiBPerConnection float64 `json:"stack_kib_per_connection"`
	// LiveHeapKiBPerConnection is the growth of HeapAlloc (live objects, without the free
	// space of their spans) per connection, for comparison.
	LiveHeapKiBPerConnection float64 `json:"live_heap_kib_per_connection"`
	GoroutinesPerConnection  float64 `json:"goroutines_per_connection"`
}

// gwRateHeld is the share of the requested rate the latency case must achieve for its
// target to count: the target is about that load.
const gwRateHeld = 0.95

// gatewayTargets are the gateway's targets: commit-to-frame p99 at most 5 times the bare
// NOTIFY round trip's, with every delivery arriving and the requested rate held (at least
// gwRateHeld of it achieved); the fan-out at least half the bare broadcast server's
// frames/s; and at most 16 KiB per idle connection.
func (g GatewayResult) targets() []bench.Target {
	var out []bench.Target
	if l := g.Latency; l.Deliveries > 0 {
		name := fmt.Sprintf("gateway commit-to-frame p99 / bare NOTIFY round trip p99 (%d connections, %d events/s", l.Connections, l.RequestedRate)
		held := l.held()
		if !held {
			name += fmt.Sprintf(" requested, %.0f achieved", l.AchievedRate)
		}
		name += ")"
		if l.Missing > 0 {
			name += fmt.Sprintf("; %d deliveries missing", l.Missing)
		}
		out = append(out, bench.Target{Name: name, Value: l.P99Ratio, Limit: "<= 5, rate held, every delivery", Pass: l.P99Ratio <= 5 && l.Missing == 0 && held})
	}
	if f := g.Fanout; f.BareFrames > 0 {
		out = append(out, bench.Target{
			Name:  fmt.Sprintf("gateway fan-out, %d connections: frames/s / bare broadcast server frames/s", f.Connections),
			Value: f.Ratio, Limit: ">= 0.5", Pass: f.Ratio >= 0.5,
		})
	}
	if i := g.Idle; i.Connections > 0 {
		out = append(out, bench.Target{
			Name:  fmt.Sprintf("gateway memory per idle connection (%d connections), KiB", i.Connections),
			Value: i.KiBPerConnection, Limit: "<= 16", Pass: i.KiBPerConnection <= 16,
		})
	}
	return out
}

// held reports whether the run achieved the load it was asked for (gwRateHeld of it): its
// latency says something about that load only then.
func (l gatewayLatency) held() bool {
	return l.AchievedRate >= gwRateHeld*float64(l.RequestedRate)
}

// Markdown renders the gateway section of docs/benchmarks.md through w.
func (g GatewayResult) Markdown(w func(format string, args ...any)) {
	l, f, i := g.Latency, g.Fanout, g.Idle
	w("\n## WebSocket gateway\n\n")
	w("An App with the api and gateway roles on a database of its own, served on 127.0.0.1 with\n")
	w("its log tail running (`gateway.send_buffer` %d batches, `gateway.batch_window` %s,\n", g.SendBuffer, g.BatchWindow)
	w("`sync.tail_batch_size` %d, the defaults,\n", g.TailBatchSize)
	w("`gateway.heartbeat_interval` %s so that no heartbeat runs during a case). The connections\n", g.HeartbeatInterval)
	w("are Sam's and Robin's in turn, each with a member grant on the one channel every event is\n")
	w("posted in (`message.created` in one thread, written by Alex), so every connection receives\n")
	w("every event, authorized for it at delivery time. Every client is the benchmark's own minimal\n")
	w("WebSocket client (RFC 6455 over a `net.Conn`, no extension): it upgrades with its bearer\n")
	w("token in the `Authorization` header, sends a masked `hello`, reads `ready`, and then reads\n")
	w("frames continuously through a 16 KiB buffer, answering ping and close, keeping the first %d\n", eventKeep)
	w("bytes of each message (an event's seq, read without decoding JSON) and skipping the rest.\n")
	w("The clients of the latency and fan-out cases run in a client process of their own (the\n")
	w("benchmark's binary run again), so the benchmark's process holds the servers alone and the\n")
	w("busy cores of each side are measured apart (/proc/<pid>/stat).\n")

	w("\n### Commit-to-frame latency\n\n")
	w("Figure: from the moment a writer's commit returned (`RunInTx` with the appender, one event per\n")
	w("transaction, %d writers sharing the load) to the moment a client had read the event's frame,\n", l.Writers)
	w("for each of the %d connections (clients in the client process; both processes read\n", l.Connections)
	w("the wall clock once and the monotonic clock after), over every event\n")
	w("committed in the measured window. Baseline: the bare LISTEN/NOTIFY round trip between two\n")
	w("plain connections to the same database, measured in the same window under the same load.\n")
	w("Two runs on the same connections: the target's load, and a fifth of it for reference.\n")
	w("The figure includes the gateway's batch window (`gateway.batch_window` %s, ADR 0018): an\n", g.BatchWindow)
	w("event committed within the window after the last batch went out waits for the window's end,\n")
	w("merged with the others of the window into one write per connection.\n")
	w("Lower is better; the ratio is figure / baseline. A load counts as reached when the writers\n")
	w("committed at least %.0f%% of the events asked for in the window; a ratio measured at a load\n", gwRateHeld*100)
	w("that was not reached says nothing about the target and is marked so.\n\n")
	w("| load | percentile | gateway | bare NOTIFY round trip | ratio |\n")
	w("| --- | --- | ---: | ---: | ---: |\n")
	runs := []gatewayLatency{l}
	if g.LatencyReference.Deliveries > 0 {
		runs = append(runs, g.LatencyReference)
	}
	for _, r := range runs {
		mark := ""
		if !r.held() {
			mark = " (load not reached)"
		}
		w("| %d events/s | p50 | %.2f ms | %.2f ms | %.2f%s |\n", r.RequestedRate, r.P50Ms, r.BareP50Ms, r.P50Ratio, mark)
		w("| %d events/s | p99 | %.2f ms | %.2f ms | %.2f%s |\n", r.RequestedRate, r.P99Ms, r.BareP99Ms, r.P99Ratio, mark)
	}
	w("\n| load | events/s achieved | load reached | ticks skipped | events | deliveries | missing | busy cores (all, server, clients) | round trips |\n")
	w("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range runs {
		w("| %d events/s | %.1f | %s | %d | %d | %d | %d | %.2f, %.2f, %.2f | %d |\n", r.RequestedRate, r.AchievedRate, yesNo(r.held()),
			r.Skipped, r.Events, r.Deliveries, r.Missing, r.BusyCores, r.ServerCores, r.ClientCores, r.BareSamples)
	}
	w("\n| load | Go scheduler latency, server process (p50, p99) | threads waiting for a CPU (server, clients) |\n")
	w("| --- | ---: | ---: |\n")
	for _, r := range runs {
		w("| %d events/s | %.2f ms, %.2f ms | %.2f, %.2f |\n", r.RequestedRate, r.SchedP50Ms, r.SchedP99Ms, r.ServerRunWait, r.ClientRunWait)
	}
	w("\nTicks skipped: ticks of the writers' pacer that found a second of ticks already queued.\n")
	w("Busy cores: how many of the machine's %d cores were busy in the window: all of them\n", g.Cores)
	w("(/proc/stat: the database, both processes, the kernel and anything else on the machine), the\n")
	w("benchmark's process (the App: gateway, log tail and writers) and the client process\n")
	w("(/proc/<pid>/stat). Go scheduler latency: how long a runnable goroutine of the benchmark's\n")
	w("process (a session, the tail, a writer whose commit returned) waited to run\n")
	w("(runtime/metrics `/sched/latencies:seconds`, bucket upper bounds). Threads waiting for a\n")
	w("CPU: the time each process's threads spent runnable on the kernel's run queues per second\n")
	w("of the window (/proc/<pid>/task/*/schedstat): above 0 when the machine had fewer free cores\n")
	w("than the process wanted. Without load the bare round trip takes %.2f ms (p50) and %.2f ms\n", l.IdleBareP50Ms, l.IdleBareP99Ms)
	w("(p99).\n")
	for _, r := range runs {
		if !r.held() {
			w("At %d events/s the load was not reached: the writers committed %.1f events/s (%d ticks\n", r.RequestedRate, r.AchievedRate, r.Skipped)
			w("skipped), so the latencies at that load do not measure the target.\n")
		}
	}
	for _, r := range runs {
		if r.DrainError != "" {
			w("At %d events/s, after the load stopped, not every frame arrived: %s.\n", r.RequestedRate, r.DrainError)
		}
	}

	w("\n### Fan-out\n\n")
	w("Figure: event frames delivered per second to %d connections (clients in the client\n", f.Connections)
	w("process) while one writer appends %d events per transaction through the App, starting its next\n", f.EventsPerTx)
	w("transaction as soon as the slowest connection is at most %d transactions behind (%d\n", f.Window, f.Transactions)
	w("transactions in all), so the gateway is kept busy without any connection falling\n")
	w("`gateway.send_buffer` batches behind. Baseline: a bare broadcast server written in the\n")
	w("benchmark (a `github.com/coder/websocket` server like the gateway's: answers `hello` with\n")
	w("`ready`, then writes the same pre-encoded %d-byte event frame the gateway sent to each of as\n", f.FrameBytes)
	w("many connections as fast as each takes it, one `Write` per frame), in the benchmark's\n")
	w("process, read by the same client code in a client process. The baseline keeps the\n")
	w("same window (each connection at most %d frames ahead of the slowest client): written without\n", (f.Window+1)*f.EventsPerTx)
	w("one, %d connections fill the kernel's socket buffers until TCP memory pressure stalls them all.\n", f.Connections)
	w("The case runs in %d rounds, each measuring the gateway and then the baseline for 1/%d of the\n", f.Rounds, f.Rounds)
	w("case's time on fresh connections, so drift on the machine hits both alike. Higher is better.\n\n")
	w("| connections | gateway frames/s | bare broadcast frames/s | ratio | busy cores, gateway (all, server, clients) | busy cores, bare (all, server, clients) |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %.0f | %.0f | %.2f | %.2f, %.2f, %.2f | %.2f, %.2f, %.2f |\n", f.Connections, f.FramesPerSecond, f.BareFramesPerSecond, f.Ratio,
		f.BusyCores, f.ServerCores, f.ClientCores, f.BareBusyCores, f.BareServerCores, f.BareClientCores)

	w("\n### Memory per idle connection\n\n")
	w("The benchmark's binary runs again as a child process that opens %d connections, sends `hello`,\n", i.Connections)
	w("reads `ready` and then only reads, so the benchmark's process holds the server's side alone.\n")
	w("Figure: the growth of that process's `HeapInuse` + `StackInuse` (runtime.MemStats, after two\n")
	w("garbage collections each) from before the child started to when the gateway counts every\n")
	w("connection open and settled, divided by the connections: the hijacked HTTP connection with\n")
	w("its buffers, the library's connection, the session with its goroutines and their stacks,\n")
	w("its registration with the gateway's hub and timers, what the upgrade request left\n")
	w("referenced, and whatever else the process grew by meanwhile (pooled database connections\n")
	w("included). The live objects alone (`HeapAlloc`) grew by %.2f KiB per connection.\n\n", i.LiveHeapKiBPerConnection)
	w("| connections | heap per connection | stacks per connection | total per connection | goroutines per connection |\n")
	w("| ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %.2f KiB | %.2f KiB | %.2f KiB | %.2f |\n", i.Connections, i.HeapKiBPerConnection, i.StackKiBPerConnection, i.KiBPerConnection, i.GoroutinesPerConnection)

	v := g.Revocation
	w("\n### Revocation delay\n\n")
	w("Figure: with %d connections open (hello, ready), every %dth with a token of its own, the\n", v.Connections, gwRevokeShare)
	w("time from the start of the call that commits a token revoke (`App.RevokeToken`, which commits\n")
	w("`token.revoked`) to the close frame (4008, after the `token_revoked` error frame) on that\n")
	w("token's connection, the %d tokens revoked one at a time. Baseline, in the same run and on\n", v.Revoked)
	w("the same connections: from the start of an ordinary event's committing call (`RunInTx` with\n")
	w("the appender) to its frame on each connection (%d events, one at a time). Both start before\n", v.BaselineEvents)
	w("the commit, an upper bound: from the call's return the close often came first (the commit's\n")
	w("NOTIFY wakes the tail before the acknowledgment reaches the caller). Ordinary events wait in\n")
	w("`gateway.batch_window` after a batch; a revocation is scanned for as its batch arrives.\n")
	w("The column bound is the measured App's `gateway.revocation_max_delay`, the delay spec 03\n")
	w("promises at most.\n\n")
	w("| connections | revoked | closed | missing | revocation p50 | revocation p99 | revocation max | bound | event delivery p50 | event delivery p99 |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %d | %d | %.2f ms | %.2f ms | %.2f ms | %s | %.2f ms | %.2f ms |\n", v.Connections, v.Revoked, v.Closed, v.Missing,
		v.P50Ms, v.P99Ms, v.MaxMs, v.MaxDelay, v.BaselineP50Ms, v.BaselineP99Ms)
}

// yesNo spells a flag of a table.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
