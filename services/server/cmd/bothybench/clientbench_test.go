package main

import (
	"strings"
	"testing"
	"time"
)

// clientSmokeOptions are the options of the client cases' smoke tests: a small sync world in
// which Sam, grown to the snapshot's person, sees 10 channels (every other one of 20) with a
// mention in one thread of each, and two rounds.
func clientSmokeOptions(c string) options {
	return options{
		duration:     200 * time.Millisecond,
		warmup:       20 * time.Millisecond,
		syncEvents:   3000,
		syncChannels: 20,
		pageCursors:  10,
		clientRounds: 2,
		cases:        map[string]bool{c: true},
	}
}

// TestSDKSmoke runs the sdk case alone in a small world: not a measurement, a check that the SDK
// compiles and runs in Node against the served App, reaches the head with Sam's channels and his
// mentions named, the bare loop replays its requests, and the report has its section and target.
func TestSDKSmoke(t *testing.T) {
	t.Parallel()
	rep, steps := smokeMeasure(t, clientSmokeOptions("sdk"), true)
	// Steps: the sync world's two, Sam's growth, the compile, the rounds; no catch-up or snapshot.
	if len(steps) != 5 || reportSection[catchUpResult](rep).Pages != nil || reportSection[snapshotResult](rep).Requests != 0 || reportSection[sidebarResult](rep).Channels != 0 {
		t.Fatalf("%d steps (want 5: %q), or a case that was not asked for ran: %+v", len(steps), steps, rep)
	}
	s := reportSection[sdkResult](rep)
	if s.VisibleChannels != 10 || s.Mentions != 10 || s.Threads != 10*unreadPerChannel || s.HeadSeq <= 3000 || s.Rounds != 2 {
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
	md := rep.markdown()
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
	rep, steps := smokeMeasure(t, clientSmokeOptions("sidebar"), true)
	// Steps: the sync world's two, Sam's growth, the rounds.
	if len(steps) != 4 || reportSection[sdkResult](rep).Requests != 0 {
		t.Fatalf("%d steps (want 4: %q), or the sdk case ran: %+v", len(steps), steps, reportSection[sdkResult](rep))
	}
	s := reportSection[sidebarResult](rep)
	if s.Channels != 10 || s.Rounds != 2 || s.HTMLBytes == 0 || s.P50Ms <= 0 || s.BaselineP50Ms <= 0 || s.MaxMs < s.P50Ms || s.Ratio <= 0 {
		t.Fatalf("sidebar case without figures: %+v", s)
	}
	if md := rep.markdown(); !strings.Contains(md, "## Web client: first render of the sidebar") || !strings.Contains(md, "| 10 |") {
		t.Fatalf("markdown lacks the sidebar section:\n%s", md)
	}
}

// TestClientCasesFailLoudly checks that a client case without its tools fails and names the make
// target that brings them, instead of skipping.
// Not parallel: it sets CHROMIUM.
func TestClientCasesFailLoudly(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = needFile(root, "clients/typescript/node_modules/no-such-package/package.json", "sdk: the SDK's npm packages", "make sdk-install")
	if err == nil || !strings.Contains(err.Error(), "run make sdk-install") {
		t.Fatalf("needFile of a missing file = %v, want an error naming make sdk-install", err)
	}
	t.Setenv("CHROMIUM", "/nonexistent/chromium")
	_, err = sidebarCase(t.Context(), &syncWorld{snapshotChannels: 1}, 1, func(string, ...any) {})
	if err == nil || (!strings.Contains(err.Error(), "make browser-install") && !strings.Contains(err.Error(), "make web-install")) {
		t.Fatalf("sidebarCase without Chromium = %v, want an error naming make browser-install", err)
	}
}
