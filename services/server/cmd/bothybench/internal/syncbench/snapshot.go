package syncbench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// snapshotRounds is how many rounds the snapshot case runs in: a multiple of its three sides
// (baseline, gzip figure, identity figure), which take turns at running first (rotation), so
// each runs first, second and third equally often. With four rounds in a fixed order the bare
// p50 moved from 19.3 to 14.4 ms between two runs of the same code while the figure's stayed
// at 18 ms.
const snapshotRounds = 12

// SnapshotResult is the snapshot case: GET /api/v1/sync/snapshot as Sam over HTTP beside the
// snapshot's component queries issued bare, and the size of the real response. The figure is
// the request as clients send it, with Accept-Encoding: gzip; the same request with
// Accept-Encoding: identity is measured beside it for comparison.
type SnapshotResult struct {
	VisibleChannels  int     `json:"visible_channels"`
	UnreadThreads    int     `json:"unread_threads"`
	MentionedThreads int     `json:"mentioned_threads"`
	Requests         int     `json:"requests"`
	IdentityRequests int     `json:"identity_requests"`
	BaselineRuns     int     `json:"baseline_runs"`
	BaselineQueries  int     `json:"baseline_queries"`
	P50Ms            float64 `json:"p50_ms"`
	P99Ms            float64 `json:"p99_ms"`
	IdentityP50Ms    float64 `json:"identity_p50_ms"`
	IdentityP99Ms    float64 `json:"identity_p99_ms"`
	BaselineP50Ms    float64 `json:"baseline_p50_ms"`
	BaselineP99Ms    float64 `json:"baseline_p99_ms"`
	P50Ratio         float64 `json:"p50_ratio"`
	P99Ratio         float64 `json:"p99_ratio"`
	IdentityP50Ratio float64 `json:"identity_p50_ratio"`
	IdentityP99Ratio float64 `json:"identity_p99_ratio"`
	// ContentEncoding is the response's Content-Encoding to Accept-Encoding: gzip.
	ContentEncoding string `json:"content_encoding"`
	// Bytes is the response body on the wire (compressed); BytesPerChannel is the target's
	// figure.
	Bytes           int     `json:"bytes"`
	BytesPerChannel float64 `json:"bytes_per_visible_channel"`
	// JSONBytes is the JSON body itself, what a client without gzip receives.
	JSONBytes      int            `json:"json_bytes"`
	JSONPerChannel float64        `json:"json_bytes_per_visible_channel"`
	Parts          []snapshotPart `json:"parts"`
}

// snapshotPart is the size of one member of the snapshot's JSON body.
type snapshotPart struct {
	Member string `json:"member"`
	Items  int    `json:"items"`
	Bytes  int    `json:"bytes"`
}

// snapshotCase measures Sam's snapshot (GET /api/v1/sync/snapshot over HTTP with a keep-alive
// connection, the response read to its end as it comes over the wire, not decompressed and
// not decoded) with Accept-Encoding: gzip, as browsers and HTTP libraries send it, and with
// Accept-Encoding: identity, beside the snapshot's component queries issued bare, in
// snapshotRounds rounds of the three in rotating order (rotation), after a warm-up of all
// three. The sizes come from real responses.
func snapshotCase(ctx context.Context, w *SyncWorld, bare *pgxpool.Pool, d time.Duration, progress func(string, ...any)) (SnapshotResult, error) {
	res := SnapshotResult{VisibleChannels: w.SnapshotChannels, MentionedThreads: w.snapshotMentioned}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	url := w.Base + "/api/v1/sync/snapshot"
	get := func(encoding string) (string, error) { return bench.GetCoded(ctx, c, url, w.Sam.Token, encoding, &buf) }
	if _, err := get(bench.EncodingIdentity); err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	body := bytes.Clone(buf.Bytes())
	var err error
	if res.ContentEncoding, err = get(bench.EncodingGzip); err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	if err := res.measureBody(body, buf.Bytes()); err != nil {
		return res, err
	}
	if res.VisibleChannels != w.SnapshotChannels {
		return res, fmt.Errorf("snapshot: %d channels, want %d", res.VisibleChannels, w.SnapshotChannels)
	}
	q := newSnapshotQueries(w)
	res.BaselineQueries = snapshotBareQueries
	if err := q.run(ctx, bare); err != nil {
		return res, err
	}
	progress("snapshot: %d channels, %d unread threads, %d bytes on the wire; %d rounds", res.VisibleChannels, res.UnreadThreads, res.Bytes, snapshotRounds)
	var figures, identity, baselines []time.Duration
	fetch := func(encoding string) func(int) error {
		return func(int) error {
			if _, err := get(encoding); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			return nil
		}
	}
	sides := []struct {
		run func(int) error
		dst *[]time.Duration
	}{
		{func(int) error { return q.run(ctx, bare) }, &baselines},
		{fetch(bench.EncodingGzip), &figures},
		{fetch(bench.EncodingIdentity), &identity},
	}
	slice := d / snapshotRounds
	for round := range snapshotRounds {
		for _, i := range bench.Rotation(round, len(sides)) {
			lat, _, err := bench.LoopFor(ctx, slice, 0, sides[i].run)
			if err != nil {
				return res, err
			}
			*sides[i].dst = append(*sides[i].dst, lat...)
		}
	}
	res.Requests, res.IdentityRequests, res.BaselineRuns = len(figures), len(identity), len(baselines)
	res.P50Ms, res.P99Ms = bench.Ms(bench.Percentile(figures, 50)), bench.Ms(bench.Percentile(figures, 99))
	res.IdentityP50Ms, res.IdentityP99Ms = bench.Ms(bench.Percentile(identity, 50)), bench.Ms(bench.Percentile(identity, 99))
	res.BaselineP50Ms, res.BaselineP99Ms = bench.Ms(bench.Percentile(baselines, 50)), bench.Ms(bench.Percentile(baselines, 99))
	res.P50Ratio, res.P99Ratio = bench.Round2(res.P50Ms/res.BaselineP50Ms), bench.Round2(res.P99Ms/res.BaselineP99Ms)
	res.IdentityP50Ratio, res.IdentityP99Ratio = bench.Round2(res.IdentityP50Ms/res.BaselineP50Ms), bench.Round2(res.IdentityP99Ms/res.BaselineP99Ms)
	return res, nil
}

// measureBody records the size of the snapshot's JSON body and of each of its members, the
// counts of channels and unread threads in it, and the size of the response on the wire (wire:
// the body of the gzip request as it arrived, which must decompress to body).
func (r *SnapshotResult) measureBody(body, wire []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return fmt.Errorf("snapshot: decode: %w", err)
	}
	if r.ContentEncoding != bench.EncodingGzip {
		return fmt.Errorf("snapshot: the server answered Accept-Encoding: gzip with Content-Encoding %q", r.ContentEncoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		return fmt.Errorf("snapshot: the gzip answer: %w", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("snapshot: the gzip answer: %w", err)
	}
	if !bytes.Equal(plain, body) {
		return errors.New("snapshot: the gzip answer does not decompress to the identity answer")
	}
	r.JSONBytes, r.Bytes = len(body), len(wire)
	r.Parts = nil
	for name, raw := range members {
		var list []json.RawMessage
		items := 0
		if json.Unmarshal(raw, &list) == nil {
			items = len(list)
		}
		switch name {
		case "channels":
			r.VisibleChannels = items
		case "unread_threads":
			r.UnreadThreads = items
		}
		r.Parts = append(r.Parts, snapshotPart{Member: name, Items: items, Bytes: len(raw)})
	}
	slices.SortFunc(r.Parts, func(a, b snapshotPart) int { return b.Bytes - a.Bytes })
	if r.VisibleChannels > 0 {
		r.BytesPerChannel = bench.Round1(float64(r.Bytes) / float64(r.VisibleChannels))
		r.JSONPerChannel = bench.Round1(float64(r.JSONBytes) / float64(r.VisibleChannels))
	}
	return nil
}

// Markdown renders the snapshot section of docs/benchmarks.md through w.
func (r SnapshotResult) Markdown(w func(format string, args ...any)) {
	w("\n## Snapshot\n\n")
	w("In the catch-up world, Sam is granted every other channel (over HTTP), so he sees %d\n", r.VisibleChannels)
	w("channels; his read states (six threads of each of those channels read to the end, two up to\n")
	w("three messages before it, two never) and one mention of him in the newest message of one\n")
	w("never-read thread per channel are written in bulk SQL (the use cases would take a\n")
	w("transaction and an event for each of thousands); his sidebar, three settings and four\n")
	w("drafts through the use cases over HTTP. So his snapshot lists %d threads with unread\n", r.UnreadThreads)
	w("messages (%d with an unread mention).\n\n", r.MentionedThreads)
	w("Figure: `GET /api/v1/sync/snapshot` as Sam over HTTP on a keep-alive connection with\n")
	w("`Accept-Encoding: gzip`, as browsers and HTTP libraries send it (the server compresses JSON\n")
	w("answers for clients that accept gzip), the response read to its end as it arrives, neither\n")
	w("decompressed nor decoded (no If-None-Match). Beside it, for comparison, the same request\n")
	w("with `Accept-Encoding: identity` (no compression). Baseline: the snapshot's component queries\n")
	w("issued bare, %d statements one after another on a plain pgx pool, each once: the head, the\n", r.BaselineQueries)
	w("epoch, the permission_version read that stands for the cached Scope, the principal, the\n")
	w("instance, the spaces, the channels, the sidebar, the read states, the thread counters, the\n")
	w("unread mention counts, the settings, the drafts, the agents and their names, the flags,\n")
	w("each with the parameters the snapshot passes and its rows scanned into plain values (the\n")
	w("visible channels and the read positions passed on as the snapshot passes them). The\n")
	w("snapshot itself also authenticates the token and reads permission_version twice: for its\n")
	w("authorization and for the Scope it filters every part with, read after the head; it reads\n")
	w("the parts after the Scope concurrently, at most four at once on separate pool connections,\n")
	w("where the baseline issues them one after another. The case runs in %d rounds of baseline,\n", snapshotRounds)
	w("gzip figure and identity figure, each round starting with the next of the three, after a\n")
	w("warm-up. Lower is better; the ratios are figure / baseline, and the target is about the gzip\n")
	w("figure.\n\n")
	w("| visible channels | unread threads | p50 | p99 | identity p50 | identity p99 | bare p50 | bare p99 | p50 ratio | p99 ratio | identity ratio p50 / p99 |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f | %.2f | %.2f / %.2f |\n", r.VisibleChannels, r.UnreadThreads,
		r.P50Ms, r.P99Ms, r.IdentityP50Ms, r.IdentityP99Ms, r.BaselineP50Ms, r.BaselineP99Ms, r.P50Ratio, r.P99Ratio, r.IdentityP50Ratio, r.IdentityP99Ratio)
	w("\nOn the wire the response is %d bytes (Content-Encoding: %s), %.0f per visible channel; its\n", r.Bytes, r.ContentEncoding, r.BytesPerChannel)
	w("JSON is %d bytes, %.0f per visible channel, which a client without gzip receives. The JSON\n", r.JSONBytes, r.JSONPerChannel)
	w("by member:\n\n")
	w("| member | items | bytes | bytes per visible channel |\n")
	w("| --- | ---: | ---: | ---: |\n")
	for _, p := range r.Parts {
		per := 0.0
		if r.VisibleChannels > 0 {
			per = float64(p.Bytes) / float64(r.VisibleChannels)
		}
		w("| %s | %d | %d | %.1f |\n", p.Member, p.Items, p.Bytes, per)
	}
}
