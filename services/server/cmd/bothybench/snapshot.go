package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// snapshotRounds is how many rounds the snapshot case runs in, like the append cases.
const snapshotRounds = 4

// snapshotResult is the snapshot case: GET /api/v1/sync/snapshot as Sam over HTTP beside the
// snapshot's component queries issued bare, and the size of the real response.
type snapshotResult struct {
	VisibleChannels  int            `json:"visible_channels"`
	UnreadThreads    int            `json:"unread_threads"`
	MentionedThreads int            `json:"mentioned_threads"`
	Requests         int            `json:"requests"`
	BaselineRuns     int            `json:"baseline_runs"`
	BaselineQueries  int            `json:"baseline_queries"`
	P50Ms            float64        `json:"p50_ms"`
	P99Ms            float64        `json:"p99_ms"`
	BaselineP50Ms    float64        `json:"baseline_p50_ms"`
	BaselineP99Ms    float64        `json:"baseline_p99_ms"`
	P50Ratio         float64        `json:"p50_ratio"`
	P99Ratio         float64        `json:"p99_ratio"`
	Bytes            int            `json:"bytes"`
	BytesPerChannel  float64        `json:"bytes_per_visible_channel"`
	GzipBytes        int            `json:"gzip_bytes"`
	GzipPerChannel   float64        `json:"gzip_bytes_per_visible_channel"`
	Parts            []snapshotPart `json:"parts"`
}

// snapshotPart is the size of one member of the snapshot's JSON body.
type snapshotPart struct {
	Member string `json:"member"`
	Items  int    `json:"items"`
	Bytes  int    `json:"bytes"`
}

// snapshotCase measures Sam's snapshot (GET /api/v1/sync/snapshot over HTTP with a keep-alive
// connection, the response read to its end) beside the snapshot's component queries issued
// bare, in snapshotRounds rounds of baseline then figure, after a warm-up of both. The sizes
// come from one real response.
func snapshotCase(ctx context.Context, w *syncWorld, bare *pgxpool.Pool, d time.Duration, progress func(string, ...any)) (snapshotResult, error) {
	res := snapshotResult{VisibleChannels: w.snapshotChannels, MentionedThreads: w.snapshotMentioned}
	c := newPostClient()
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	url := w.base + "/api/v1/sync/snapshot"
	if err := getRaw(ctx, c, url, w.sam.token, &buf); err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	if err := res.measureBody(buf.Bytes()); err != nil {
		return res, err
	}
	if res.VisibleChannels != w.snapshotChannels {
		return res, fmt.Errorf("snapshot: %d channels, want %d", res.VisibleChannels, w.snapshotChannels)
	}
	q := newSnapshotQueries(w)
	res.BaselineQueries = snapshotBareQueries
	if err := q.run(ctx, bare); err != nil {
		return res, err
	}
	progress("snapshot: %d channels, %d unread threads, %d bytes; %d rounds", res.VisibleChannels, res.UnreadThreads, res.Bytes, snapshotRounds)
	var figures, baselines []time.Duration
	slice := d / snapshotRounds
	for range snapshotRounds {
		lat, _, err := loopFor(ctx, slice, 0, func(int) error { return q.run(ctx, bare) })
		if err != nil {
			return res, err
		}
		baselines = append(baselines, lat...)
		lat, _, err = loopFor(ctx, slice, 0, func(int) error { return getRaw(ctx, c, url, w.sam.token, &buf) })
		if err != nil {
			return res, fmt.Errorf("snapshot: %w", err)
		}
		figures = append(figures, lat...)
	}
	res.Requests, res.BaselineRuns = len(figures), len(baselines)
	res.P50Ms, res.P99Ms = ms(percentile(figures, 50)), ms(percentile(figures, 99))
	res.BaselineP50Ms, res.BaselineP99Ms = ms(percentile(baselines, 50)), ms(percentile(baselines, 99))
	res.P50Ratio, res.P99Ratio = round2(res.P50Ms/res.BaselineP50Ms), round2(res.P99Ms/res.BaselineP99Ms)
	return res, nil
}

// measureBody records the size of the snapshot body and of each of its members, and the
// counts of channels and unread threads in it.
func (r *snapshotResult) measureBody(body []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return fmt.Errorf("snapshot: decode: %w", err)
	}
	r.Bytes = len(body)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(body); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	r.GzipBytes = gz.Len()
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
		r.BytesPerChannel = round1(float64(r.Bytes) / float64(r.VisibleChannels))
		r.GzipPerChannel = round1(float64(r.GzipBytes) / float64(r.VisibleChannels))
	}
	return nil
}

// markdown renders the snapshot section of docs/benchmarks.md through w.
func (r snapshotResult) markdown(w func(format string, args ...any)) {
	w("\n## Snapshot\n\n")
	w("In the catch-up world, Sam is granted every other channel (over HTTP), so he sees %d\n", r.VisibleChannels)
	w("channels; his read states (six threads of each of those channels read to the end, two up to\n")
	w("three messages before it, two never) and one mention of him in the newest message of one\n")
	w("never-read thread per channel are written in bulk SQL (the use cases would take a\n")
	w("transaction and an event for each of thousands); his sidebar, three settings and four\n")
	w("drafts through the use cases over HTTP. So his snapshot lists %d threads with unread\n", r.UnreadThreads)
	w("messages (%d with an unread mention).\n\n", r.MentionedThreads)
	w("Figure: `GET /api/v1/sync/snapshot` as Sam over HTTP on a keep-alive connection, the\n")
	w("response read to its end (no If-None-Match). Baseline: the snapshot's component queries\n")
	w("issued bare, %d statements one after another on a plain pgx pool, each once: the head, the\n", r.BaselineQueries)
	w("epoch, the permission_version read that stands for the cached Scope, the principal, the\n")
	w("instance, the spaces, the channels, the sidebar, the read states, the thread counters, the\n")
	w("unread mention counts, the settings, the drafts, the agents and their names, the flags,\n")
	w("each with the parameters the snapshot passes and its rows scanned into plain values (the\n")
	w("visible channels and the read positions passed on as the snapshot passes them). The\n")
	w("snapshot itself also authenticates the token and reads permission_version once per\n")
	w("authorization that checks the cached Scope. The case runs in %d rounds of baseline then\n", snapshotRounds)
	w("figure, after a warm-up. Lower is better; the ratios are figure / baseline.\n\n")
	w("| visible channels | unread threads | p50 | p99 | bare p50 | bare p99 | p50 ratio | p99 ratio |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f | %.2f |\n", r.VisibleChannels, r.UnreadThreads,
		r.P50Ms, r.P99Ms, r.BaselineP50Ms, r.BaselineP99Ms, r.P50Ratio, r.P99Ratio)
	w("\nThe response is %d bytes, %.0f per visible channel (gzip-compressed by the benchmark for\n", r.Bytes, r.BytesPerChannel)
	w("comparison: %d bytes, %.0f per channel; the server does not compress). By member:\n\n", r.GzipBytes, r.GzipPerChannel)
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
