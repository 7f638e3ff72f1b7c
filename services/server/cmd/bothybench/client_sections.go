package main

import "fmt"

// Key is the sdk_cold_start member of benchmarks.json.
func (sdkResult) Key() string { return "sdk_cold_start" }

// Targets checks the SDK's cold start at most 1.3 times the bare fetch loop at p50.
func (r sdkResult) Targets() []target {
	var ts []target
	if s := r; s.Requests > 0 {
		ts = append(ts, target{
			Name:  fmt.Sprintf("SDK cold start for Sam (%d channels, %d requests): p50 / bare fetch loop of the same requests p50", s.VisibleChannels, s.Requests),
			Value: s.Ratio, Limit: "<= 1.3", Pass: s.Ratio <= 1.3,
		})
	}
	return ts
}

// Key is the sidebar_first_render member of benchmarks.json.
func (sidebarResult) Key() string { return "sidebar_first_render" }

// Targets: the sidebar case has none.
func (sidebarResult) Targets() []target { return nil }
