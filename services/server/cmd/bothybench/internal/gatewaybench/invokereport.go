package gatewaybench

import (
	"fmt"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// held reports whether the run achieved the invocations per second it was asked for
// (gwRateHeld of them): its latency says something about that load only then.
func (r InvokeResult) held() bool {
	return r.AchievedRate >= gwRateHeld*float64(r.RequestedRate)
}

// targets is the invocation case's target: the invocation delivery p99 at most 5 times the bare NOTIFY
// round trip's in the same window, with the rate held, every invocation delivered to its agent
// only, every delivery carrying its invocation_token and no other frame carrying one.
func (r InvokeResult) targets() []bench.Target {
	if r.Deliveries == 0 {
		return nil
	}
	name := fmt.Sprintf("invocation delivery p99 / bare NOTIFY round trip p99 (%d agents, %d invocations/s", r.Agents, r.RequestedRate)
	held := r.held()
	if !held {
		name += fmt.Sprintf(" requested, %.0f achieved", r.AchievedRate)
	}
	name += ")"
	if r.Missing > 0 {
		name += fmt.Sprintf("; %d invocations missing", r.Missing)
	}
	if r.WithoutToken > 0 {
		name += fmt.Sprintf("; %d without invocation_token", r.WithoutToken)
	}
	if r.Misaddressed > 0 {
		name += fmt.Sprintf("; %d delivered to another agent", r.Misaddressed)
	}
	if r.OtherWithToken > 0 {
		name += fmt.Sprintf("; %d other frames with an invocation_token", r.OtherWithToken)
	}
	return []bench.Target{{
		Name: name, Value: r.P99Ratio, Limit: "<= 5, rate held, every invocation to its agent with its token",
		Pass: r.P99Ratio <= 5 && held && r.Missing == 0 && r.WithoutToken == 0 && r.Misaddressed == 0 && r.OtherWithToken == 0,
	}}
}

// Markdown renders the invocation delivery section of docs/benchmarks.md through w.
func (r InvokeResult) Markdown(w func(format string, args ...any)) {
	w("\n## Invocation delivery\n\n")
	w("An App with the api and gateway roles (no maintenance role, so no invocation is redelivered\n")
	w("during the run) on a database of its own, served on 127.0.0.1 (`gateway.batch_window` %s).\n", r.BatchWindow)
	w("%d agents, each with a member grant on one channel and a token of its own, are connected to\n", r.Agents)
	w("the gateway by the benchmark's minimal WebSocket client (`hello` without a cursor, so resumed\n")
	w("from the head; clients in a client process, as in the gateway cases). Sam, a member of the\n")
	w("channel, posts %d messages per second, the k-th mentioning the k-th agent in turn (`@agent001`\n", r.RequestedRate)
	w("and so on) in a thread of the channel kept for that agent (posts to one thread take its lock\n")
	w("one after the other, commit included), through the App's chat use case in the benchmark's process,\n")
	w("as `postMessage` runs it after authentication: the message, its invocation and their events\n")
	w("commit in one transaction (ADR 0031); %d goroutines share the paced posts.\n", r.Posters)
	w("Figure: from the moment the post returned (right after its `RunInTx` committed) to the moment\n")
	w("the invoked agent's client had read the `invocation.requested` frame carrying its\n")
	w("delivery-only `invocation_token`, for every invocation committed in the measured window; both\n")
	w("processes read the wall clock once and the monotonic clock after. Baseline: the bare\n")
	w("LISTEN/NOTIFY round trip between two plain connections to the same database, measured in the\n")
	w("same window under the same load, one round trip every %s (so the probe, like the invocations,\n", invRoundTripEvery)
	w("meets a system that has been waiting, and adds little load of its own). Every agent may read every thread, so each also receives\n")
	w("every post's `message.created` (%d such frames in the run, to all agents); the invocation\n", r.OtherFrames)
	w("itself is addressed to its agent alone, and only its frame may carry an `invocation_token`\n")
	w("(%d other frames did). Lower is better; the ratio is figure / baseline.\n\n", r.OtherWithToken)
	mark := ""
	if !r.held() {
		mark = " (load not reached)"
	}
	w("| percentile | invocation delivery | bare NOTIFY round trip | ratio |\n")
	w("| --- | ---: | ---: | ---: |\n")
	w("| p50 | %.2f ms | %.2f ms | %.2f%s |\n", r.P50Ms, r.BareP50Ms, r.P50Ratio, mark)
	w("| p99 | %.2f ms | %.2f ms | %.2f%s |\n", r.P99Ms, r.BareP99Ms, r.P99Ratio, mark)
	w("\n| invocations/s achieved | load reached | ticks skipped | invocations | delivered | missing | without token | to another agent | busy cores (all, server, clients) | round trips |\n")
	w("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %.1f | %s | %d | %d | %d | %d | %d | %d | %.2f, %.2f, %.2f | %d |\n", r.AchievedRate, yesNo(r.held()), r.Skipped,
		r.Invocations, r.Deliveries, r.Missing, r.WithoutToken, r.Misaddressed, r.BusyCores, r.ServerCores, r.ClientCores, r.BareSamples)
	w("\nAn invocation does not wait for the gateway's batch window: it is a prompt event, and a batch\n")
	w("that holds one goes out at once (the other events the connection holds with it).\n")
	w("Without load the bare round trip takes %.2f ms (p50) and %.2f ms (p99) at the same pace,\n", r.IdleBareP50Ms, r.IdleBareP99Ms)
	w("and %.2f ms and %.2f ms back to back (each round trip starting as the last returns). Run back\n", r.HotBareP50Ms, r.HotBareP99Ms)
	w("to back under the load, as it was until the probe was paced, it made thousands of round trips\n")
	w("a second and was itself a large share of the database's work.\n")
	if r.DrainError != "" {
		w("After the load stopped, not every invocation arrived: %s.\n", r.DrainError)
	}
}
