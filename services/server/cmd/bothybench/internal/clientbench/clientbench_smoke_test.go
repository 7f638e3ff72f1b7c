//go:build benchclients

package clientbench

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

// clientSmokeOptions are the options of the client cases' smoke tests: a small sync world in
// which Sam, grown to the snapshot's person, sees 10 channels (every other one of 20) with a
// mention in one thread of each, and two rounds.
func clientSmokeOptions(c string) bench.Options {
	return bench.Options{
		Duration:     200 * time.Millisecond,
		Warmup:       20 * time.Millisecond,
		SyncEvents:   3000,
		SyncChannels: 20,
		PageCursors:  10,
		ClientRounds: 2,
		Cases:        map[string]bool{c: true},
	}
}

// TestSDKSmoke runs the sdk case alone in a small world: not a measurement, a check that the SDK
// compiles and runs in Node against the served App, reaches the head with Sam's channels and his
// mentions named, the bare loop replays its requests, and the report has its section and target.
func TestSDKSmoke(t *testing.T) {
	t.Parallel()
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{SDK{}, Sidebar{}}, clientSmokeOptions("sdk"), true)
	// Steps: the sync world's two, Sam's growth, the compile, the rounds; no catch-up or snapshot.
	if len(steps) != 5 || bench.ReportSection[syncbench.CatchUpResult](rep).Pages != nil || bench.ReportSection[syncbench.SnapshotResult](rep).Requests != 0 || bench.ReportSection[SidebarResult](rep).Channels != 0 {
		t.Fatalf("%d steps (want 5: %q), or a case that was not asked for ran: %+v", len(steps), steps, rep)
	}
	s := bench.ReportSection[SdkResult](rep)
	if s.VisibleChannels != 10 || s.Mentions != 10 || s.Threads != 10*syncbench.UnreadPerChannel || s.HeadSeq <= 3000 || s.Rounds != 2 {
		t.Fatalf("the SDK's store = %+v, want Sam's 10 channels, their unread threads and 10 named mentions at the head", s)
	}
	// One snapshot, one listThreadMessages per mentioned thread at least, one catch-up page.
	if s.RequestKinds["GET /api/v1/sync/snapshot"] != 1 || s.RequestKinds["GET /api/v1/threads/{id}/messages"] < 10 || s.RequestKinds["GET /api/v1/events"] < 1 {
		t.Fatalf("the SDK's requests = %v", s.RequestKinds)
	}
	if s.P50Ms <= 0 || s.BaselineP50Ms <= 0 || s.MaxMs < s.P50Ms || s.Ratio <= 0 {
		t.Fatalf("sdk case without figures: %+v", s)
	}
	if len(rep.Targets) != 1 || !strings.HasPrefix(rep.Targets[0].Name, "SDK cold start") || rep.Targets[0].Limit != "<= 1.3" {
		t.Fatalf("targets = %+v, want the SDK's alone", rep.Targets)
	}
	md := rep.Markdown()
	for _, want := range []string{"## SDK cold start", "| `GET /api/v1/sync/snapshot` | 1 |", "bare fetch loop p50"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestSidebarSmoke runs the sidebar case alone in a small world: not a measurement, a check
// that headless Chromium renders the web client's sidebar with Sam's 10 channels, the static
// page of the same DOM shows them too, and the report has its section.
func TestSidebarSmoke(t *testing.T) {
	t.Parallel()
	rep, steps := benchtest.SmokeMeasure(t, []bench.Case{SDK{}, Sidebar{}}, clientSmokeOptions("sidebar"), true)
	// Steps: the sync world's two, Sam's growth, the rounds.
	if len(steps) != 4 || bench.ReportSection[SdkResult](rep).Requests != 0 {
		t.Fatalf("%d steps (want 4: %q), or the sdk case ran: %+v", len(steps), steps, bench.ReportSection[SdkResult](rep))
	}
	s := bench.ReportSection[SidebarResult](rep)
	if s.Channels != 10 || s.Rounds != 2 || s.HTMLBytes == 0 || s.P50Ms <= 0 || s.BaselineP50Ms <= 0 || s.MaxMs < s.P50Ms || s.Ratio <= 0 {
		t.Fatalf("sidebar case without figures: %+v", s)
	}
	if md := rep.Markdown(); !strings.Contains(md, "## Web client: first render of the sidebar") || !strings.Contains(md, "| 10 |") {
		t.Fatalf("markdown lacks the sidebar section:\n%s", md)
	}
}
