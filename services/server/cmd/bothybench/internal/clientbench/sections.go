package clientbench

import (
	"fmt"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Key is the sdk_cold_start member of benchmarks.json.
func (SdkResult) Key() string { return "sdk_cold_start" }

// Targets checks the SDK's cold start at most 1.3 times the bare fetch loop at p50.
func (r SdkResult) Targets() []bench.Target {
	var ts []bench.Target
	if s := r; s.Requests > 0 {
		ts = append(ts, bench.Target{
			Name:  fmt.Sprintf("SDK cold start for Sam (%d channels, %d requests): p50 / bare fetch loop of the same requests p50", s.VisibleChannels, s.Requests),
			Value: s.Ratio, Limit: "<= 1.3", Pass: s.Ratio <= 1.3,
		})
	}
	return ts
}

// Key is the sidebar_first_render member of benchmarks.json.
func (SidebarResult) Key() string { return "sidebar_first_render" }

// Targets is empty: the sidebar case has no target.
func (SidebarResult) Targets() []bench.Target { return nil }
