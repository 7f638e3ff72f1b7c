package chatbench

import (
	"fmt"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Key is the list_channel_threads member of benchmarks.json.
func (ThreadListResult) Key() string { return "list_channel_threads" }

// Targets checks listChannelThreads at most 1.5 times its bare statements at p50.
func (r ThreadListResult) Targets() []bench.Target {
	var ts []bench.Target
	if l := r; l.Requests > 0 {
		ts = append(ts,
			bench.Target{Name: fmt.Sprintf("listChannelThreads (first page of %d threads): p50 / bare statements p50", l.Threads), Value: l.P50Ratio, Limit: "<= 1.5", Pass: l.P50Ratio <= 1.5})
	}
	return ts
}

// Key is the search member of benchmarks.json.
func (SearchResult) Key() string { return "search" }

// Targets are the search case's targets (searchResult.targets).
func (r SearchResult) Targets() []bench.Target { return r.targets() }
