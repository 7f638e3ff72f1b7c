package clientbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

// The client cases (ADR 0028, ADR 0030): the SDK's cold start and the web client's first render of the
// sidebar, both for Sam in the sync world once grown to the snapshot's person (his 500
// channels in the full world). They run Node programs of the repository: the SDK's
// clients/typescript/bench/coldstart.ts (compiled with the SDK by tsc) and the web client's
// services/web/bench/sidebar.mjs (playwright-core driving Debian's Chromium). Each needs what
// make bench installs first (make sdk-install, make web-build, make browser-install); a case
// without its tools fails and says which target brings them, it never skips.

// ClientRounds is how many measured rounds of figure and baseline each client case runs, after
// one unmeasured run of each. Even, because the programs alternate which side runs first (the
// baseline in even rounds), so each side runs first equally often; eight because five left the
// SDK's median at the mercy of one slow second (1.33 and 1.18 in the last two committed runs,
// the SDK unchanged between them).
const ClientRounds = 8

// The repository paths the client cases use, relative to the repository's root.
const (
	sdkDir         = "clients/typescript"
	sdkBenchConfig = "tsconfig.bench.json"
	sdkBenchScript = ".test-tmp/bench/bench/coldstart.js"
	webDir         = "services/web"
	sidebarScript  = "services/web/bench/sidebar.mjs"
	// defaultChromium is where Debian's Chromium lives (make browser-install); CHROMIUM overrides it.
	defaultChromium = "/usr/bin/chromium"
)

// SdkResult is the sdk case: the SDK's cold start beside a bare fetch loop of the same requests.
type SdkResult struct {
	VisibleChannels int            `json:"visible_channels"`
	Threads         int            `json:"threads"`
	Mentions        int            `json:"mentions_named"`
	HeadSeq         int64          `json:"head_seq"`
	Requests        int            `json:"requests"`
	RequestKinds    map[string]int `json:"request_kinds"`
	Rounds          int            `json:"rounds"`
	P50Ms           float64        `json:"p50_ms"`
	MaxMs           float64        `json:"max_ms"`
	BaselineP50Ms   float64        `json:"baseline_p50_ms"`
	BaselineMaxMs   float64        `json:"baseline_max_ms"`
	Ratio           float64        `json:"ratio"`
}

// SidebarResult is the sidebar case: the web client's first render of the sidebar beside a
// static page of the same DOM.
type SidebarResult struct {
	Channels      int     `json:"channels"`
	HTMLBytes     int     `json:"html_bytes"`
	Rounds        int     `json:"rounds"`
	P50Ms         float64 `json:"p50_ms"`
	MaxMs         float64 `json:"max_ms"`
	BaselineP50Ms float64 `json:"baseline_p50_ms"`
	BaselineMaxMs float64 `json:"baseline_max_ms"`
	Ratio         float64 `json:"ratio"`
}

// runNode runs a Node program in dir with env added, and returns its stdout (one JSON line).
func runNode(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node is not on PATH: the client cases need Node 20 (a fresh machine needs node/npm, see the Makefile)")
	}
	cmd := exec.CommandContext(ctx, node, args...) //nolint:gosec // the repository's own bench programs
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %s: %w\n%s", args[0], err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// sdkCase compiles the SDK with its bench program (tsc -p tsconfig.bench.json into the SDK's
// .test-tmp) and runs it for Sam against the App at w.base; head is the head once Sam was grown,
// which the SDK's store must reach.
func sdkCase(ctx context.Context, w *syncbench.SyncWorld, head int64, rounds int, progress func(string, ...any)) (SdkResult, error) {
	res := SdkResult{Rounds: rounds}
	root, err := bench.RepoRoot()
	if err != nil {
		return res, fmt.Errorf("sdk: %w", err)
	}
	dir := filepath.Join(root, sdkDir)
	if err := bench.NeedFile(root, sdkDir+"/node_modules/.bin/tsc", "sdk: the SDK's npm packages", "make sdk-install"); err != nil {
		return res, err
	}
	progress("sdk: compiling the SDK and its cold start program (tsc -p %s)", sdkBenchConfig)
	tsc := exec.CommandContext(ctx, filepath.Join(dir, "node_modules/.bin/tsc"), "-p", sdkBenchConfig) //nolint:gosec // the SDK's own compiler
	tsc.Dir = dir
	if out, err := tsc.CombinedOutput(); err != nil {
		return res, fmt.Errorf("sdk: tsc: %w\n%s", err, out)
	}
	progress("sdk: Sam's cold start, %d rounds of bare fetch loop and SDK", rounds)
	out, err := runNode(ctx, dir, []string{
		"BENCH_BASE_URL=" + w.Base, "BENCH_TOKEN=" + w.Sam.Token, "BENCH_ROUNDS=" + strconv.Itoa(rounds),
	}, sdkBenchScript)
	if err != nil {
		return res, fmt.Errorf("sdk: %w", err)
	}
	var got struct {
		Requests     int            `json:"requests"`
		RequestKinds map[string]int `json:"request_kinds"`
		SDKMs        []float64      `json:"sdk_ms"`
		BareMs       []float64      `json:"bare_ms"`
		Cursor       int64          `json:"cursor"`
		HeadSeq      int64          `json:"head_seq"`
		Channels     int            `json:"channels"`
		Threads      int            `json:"threads"`
		Mentions     int            `json:"mentions"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return res, fmt.Errorf("sdk: the program's result %q: %w", out, err)
	}
	if len(got.SDKMs) != rounds || len(got.BareMs) != rounds {
		return res, fmt.Errorf("sdk: %d SDK and %d bare samples, want %d of each", len(got.SDKMs), len(got.BareMs), rounds)
	}
	// The SDK reached the head it started at, and holds what the snapshot's person sees.
	if got.Cursor < head || got.Cursor != got.HeadSeq || got.Channels != w.SnapshotChannels {
		return res, fmt.Errorf("sdk: the store ended at cursor %d of head %d with %d channels, want the head (at least %d) and %d channels",
			got.Cursor, got.HeadSeq, got.Channels, head, w.SnapshotChannels)
	}
	res.VisibleChannels, res.Threads, res.Mentions, res.HeadSeq = got.Channels, got.Threads, got.Mentions, got.HeadSeq
	res.Requests, res.RequestKinds = got.Requests, got.RequestKinds
	res.P50Ms, res.MaxMs = medianMs(got.SDKMs), bench.Round2(slices.Max(got.SDKMs))
	res.BaselineP50Ms, res.BaselineMaxMs = medianMs(got.BareMs), bench.Round2(slices.Max(got.BareMs))
	res.Ratio = bench.Round2(res.P50Ms / res.BaselineP50Ms)
	return res, nil
}

// sidebarCase runs the web client's sidebar program for Sam against the App at w.base, which
// serves the web client's build from services/web/dist (web.dir, set by syncCases).
func sidebarCase(ctx context.Context, w *syncbench.SyncWorld, rounds int, progress func(string, ...any)) (SidebarResult, error) {
	res := SidebarResult{Rounds: rounds}
	root, err := bench.RepoRoot()
	if err != nil {
		return res, fmt.Errorf("sidebar: %w", err)
	}
	if err := bench.NeedFile(root, webDir+"/node_modules/playwright-core/package.json", "sidebar: the web client's npm packages", "make web-install"); err != nil {
		return res, err
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = defaultChromium
	}
	if _, err := exec.LookPath(chromium); err != nil {
		return res, fmt.Errorf("sidebar: no Chromium at %s (CHROMIUM): run make browser-install", chromium)
	}
	progress("sidebar: %d channels in headless Chromium, %d rounds of static page and web client", w.SnapshotChannels, rounds)
	out, err := runNode(ctx, filepath.Join(root, webDir), []string{
		"BENCH_BASE_URL=" + w.Base, "BENCH_TOKEN=" + w.Sam.Token, "BENCH_CHANNELS=" + strconv.Itoa(w.SnapshotChannels),
		"BENCH_ROUNDS=" + strconv.Itoa(rounds), "CHROMIUM=" + chromium,
	}, filepath.Join(root, sidebarScript))
	if err != nil {
		return res, fmt.Errorf("sidebar: %w", err)
	}
	var got struct {
		Channels  int       `json:"channels"`
		HTMLBytes int       `json:"html_bytes"`
		AppMs     []float64 `json:"app_ms"`
		StaticMs  []float64 `json:"static_ms"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return res, fmt.Errorf("sidebar: the program's result %q: %w", out, err)
	}
	if len(got.AppMs) != rounds || len(got.StaticMs) != rounds || got.Channels != w.SnapshotChannels {
		return res, fmt.Errorf("sidebar: %d app and %d static samples of %d channels, want %d of each of %d", len(got.AppMs), len(got.StaticMs), got.Channels, rounds, w.SnapshotChannels)
	}
	res.Channels, res.HTMLBytes = got.Channels, got.HTMLBytes
	res.P50Ms, res.MaxMs = medianMs(got.AppMs), bench.Round2(slices.Max(got.AppMs))
	res.BaselineP50Ms, res.BaselineMaxMs = medianMs(got.StaticMs), bench.Round2(slices.Max(got.StaticMs))
	res.Ratio = bench.Round2(res.P50Ms / res.BaselineP50Ms)
	return res, nil
}

// medianMs returns the middle of samples (the mean of the two middle ones for an even count),
// rounded to hundredths.
func medianMs(samples []float64) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return bench.Round2(s[n/2])
	}
	return bench.Round2((s[n/2-1] + s[n/2]) / 2)
}

// Markdown renders the SDK section of docs/benchmarks.md through w.
func (r SdkResult) Markdown(w func(format string, args ...any)) {
	w("\n## SDK cold start\n\n")
	w("In the snapshot's world (Sam sees %d channels, %d threads, one unread mention of him in a\n", r.VisibleChannels, r.Threads)
	w("thread of each channel), the TypeScript SDK (`clients/typescript`, compiled by tsc, run by\n")
	w("Node) starts cold for Sam: a new `SyncEngine` with an empty store loads the snapshot, names\n")
	w("the snapshot's mentions by listing their threads' messages (it named %d), and catches up\n", r.Mentions)
	w("over REST to the head (%d); the time ends when it is live at the head (no socket, so the\n", r.HeadSeq)
	w("gateway's connect is not in it). Baseline: a bare fetch loop in the same Node process making\n")
	w("the very requests the SDK made (%d, recorded from its first run), each answer read and\n", r.Requests)
	w("parsed as JSON, the message lists as many at a time as the SDK sends them (six) and the\n")
	w("rest one after another. After one unmeasured run of each, %d rounds of both, the bare loop\n", r.Rounds)
	w("first in even rounds and the SDK first in odd ones. Lower is better; the ratio is the SDK's\n")
	w("median over the bare loop's.\n\n")
	w("| requests | SDK p50 | SDK max | bare fetch loop p50 | bare max | ratio |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.2f |\n", r.Requests, r.P50Ms, r.MaxMs, r.BaselineP50Ms, r.BaselineMaxMs, r.Ratio)
	kinds := make([]string, 0, len(r.RequestKinds))
	for k := range r.RequestKinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	w("\nThe requests:\n\n| request | count |\n| --- | ---: |\n")
	for _, k := range kinds {
		w("| `%s` | %d |\n", k, r.RequestKinds[k])
	}
}

// Markdown renders the sidebar section of docs/benchmarks.md through w.
func (r SidebarResult) Markdown(w func(format string, args ...any)) {
	w("\n## Web client: first render of the sidebar\n\n")
	w("Sam again, with %d channels. Figure: headless Chromium (Debian's, through playwright-core)\n", r.Channels)
	w("opens the web client served by bothy in a fresh browser context with his token stored, as a\n")
	w("reload after signing in finds it: the app signs in, the SDK loads a snapshot and the app\n")
	w("renders from it (the SDK names the snapshot's mentions after that, one message list per\n")
	w("mentioned thread, while the sidebar shows the snapshot's counts). The time runs from the\n")
	w("navigation's start to the animation frame after the one that painted the sidebar with its\n")
	w("%d channel links (checked at every frame). Baseline: a static page of the same DOM (the\n", r.Channels)
	w("app's rendered document, %d bytes, its scripts removed, its stylesheet kept),\n", r.HTMLBytes)
	w("served from memory on the loopback by the benchmark's Node program and timed the same way in\n")
	w("a fresh context. After one unmeasured load of each, %d rounds of both, the static page\n", r.Rounds)
	w("first in even rounds and the web client first in odd ones. Lower is better; the ratio is the\n")
	w("web client's median over the static page's.\n\n")
	w("| channels | web client p50 | web client max | static page p50 | static max | ratio |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.2f |\n", r.Channels, r.P50Ms, r.MaxMs, r.BaselineP50Ms, r.BaselineMaxMs, r.Ratio)
}
