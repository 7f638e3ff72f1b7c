package syncbench

import (
	"bytes"
	"context"
	_ "embed" // the baselines' SQL
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel/actor"
	syncmod "bothy.example.com/server/internal/sync"
)

var (
	//go:embed queries/bare_events_window.sql
	bareEventsWindow string
	//go:embed queries/bare_events_after.sql
	bareEventsAfter string
	//go:embed queries/count_events_visible_to_owner.sql
	countEventsVisibleToOwner string
)

const (
	// pageRounds is how many rounds the page cases run in, like the append cases.
	pageRounds = 4
	// PageCursors is how many cursors each reader's pages start at, drawn once.
	PageCursors = 200
	// fullRounds is how many times the full catch-up and its baseline run, in turn.
	fullRounds = 2
	// catchUpMaxEvents is sync.catchup_max_events for the sync App: the default (1,000,000)
	// answers a cursor of 0 over a longer log with 410 too_far_behind.
	catchUpMaxEvents = 100_000_000
)

// The readers of the page cases.
const (
	readerEverything = "everything (Alex, owner)"
	ReaderTenth      = "10% of channels (Sam)"
	readerOne        = "1 channel (Robin)"
)

// pageCase is one reader's catch-up page from random cursors: through the CatchUp port (Check
// then Page, what listEvents and the gateway's resume share) and over HTTP
// (GET /api/v1/events), beside the bare range read of the same seq windows.
type pageCase struct {
	Reader          string  `json:"reader"`
	VisibleChannels int     `json:"visible_channels"`
	Pages           int     `json:"pages"`
	HTTPPages       int     `json:"http_pages"`
	BaselineReads   int     `json:"baseline_reads"`
	EventsPerPage   float64 `json:"events_per_page"`
	SeqsPerPage     float64 `json:"seqs_per_page"`
	P50Ms           float64 `json:"p50_ms"`
	P99Ms           float64 `json:"p99_ms"`
	HTTPP50Ms       float64 `json:"http_p50_ms"`
	HTTPP99Ms       float64 `json:"http_p99_ms"`
	BaselineP50Ms   float64 `json:"baseline_p50_ms"`
	BaselineP99Ms   float64 `json:"baseline_p99_ms"`
	P50Ratio        float64 `json:"p50_ratio"`
	P99Ratio        float64 `json:"p99_ratio"`
	HTTPP50Ratio    float64 `json:"http_p50_ratio"`
	HTTPP99Ratio    float64 `json:"http_p99_ratio"`
}

// fullResult is the full catch-up: one client paging from cursor 0 to the head over HTTP,
// beside a bare read loop.
type fullResult struct {
	Events                  int64   `json:"events"`
	Pages                   int     `json:"pages"`
	Rounds                  int     `json:"rounds"`
	EventsPerSecond         float64 `json:"events_per_second"`
	BaselineRows            int64   `json:"baseline_rows"`
	BaselineEventsPerSecond float64 `json:"baseline_events_per_second"`
	Ratio                   float64 `json:"ratio"`
	ResponseBytesPerEvent   float64 `json:"response_bytes_per_event"`
}

// CatchUpResult is the catch-up section of the report.
type CatchUpResult struct {
	Events           int64      `json:"events"`
	Channels         int        `json:"channels"`
	Threads          int        `json:"threads"`
	HeadSeq          int64      `json:"head_seq"`
	PageSize         int        `json:"page_size"`
	ScanWindow       int        `json:"scan_window"`
	MaxEvents        int        `json:"catchup_max_events"`
	WorldSeconds     float64    `json:"world_seconds"`
	Rounds           int        `json:"rounds"`
	CursorsPerReader int        `json:"cursors_per_reader"`
	Pages            []pageCase `json:"pages"`
	Full             fullResult `json:"full"`
}

// pageReader is one reader with the cursors its pages start at and the next_cursor each got.
type pageReader struct {
	name     string
	channels int
	p        Person
	after    []int64
	through  []int64
	events   []int
}

// pageCases measures, for each reader, one catch-up page (default limit) from cursors random
// cursors (the same for every reader), two ways: through the App's CatchUp port as the reader (Check, then Page up
// to the head Check read, as listEvents and the gateway's resume call it), and over HTTP
// (GET /api/v1/events?after= on a keep-alive connection: authentication, events.catch_up,
// the same Check and Page, the response read to its end). Beside them, the bare range read of
// the same seq window (cursor < seq <= the page's next_cursor) by the same index. A first pass
// over every cursor records the windows and warms all three up; then the case runs in
// pageRounds rounds, each giving every reader's baseline, its port pages and its HTTP pages
// 1/pageRounds of d, so drift hits them alike.
func pageCases(ctx context.Context, w *SyncWorld, cu syncmod.CatchUp, bare *pgxpool.Pool, d time.Duration, cursors int, progress func(string, ...any)) ([]pageCase, error) {
	rng := rand.New(rand.NewPCG(7, 11)) //nolint:gosec // G404: fixed cursors of a benchmark, not a secret
	span := max(w.head-2*int64(w.scanWindow), 1)
	readers := []*pageReader{
		{name: readerEverything, channels: len(w.Channels), p: w.Alex},
		{name: ReaderTenth, channels: w.samPageChannels, p: w.Sam},
		{name: readerOne, channels: w.robinChannels, p: w.robin},
	}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	afters := make([]int64, cursors)
	for k := range afters {
		afters[k] = rng.Int64N(span)
	}
	// The reader as the actor, as authentication would put it in the request's context.
	actx := make([]context.Context, len(readers))
	progress("catch-up pages: first pass over %d cursors per reader", cursors)
	for i, r := range readers {
		actx[i] = actor.With(ctx, actor.Actor{PrincipalID: r.p.ID, Kind: actor.KindPerson})
		for _, after := range afters {
			pg, err := getPage(ctx, c, w.Base, r.p.Token, after, &buf)
			if err != nil {
				return nil, fmt.Errorf("catch-up page of %s: %w", r.name, err)
			}
			r.after = append(r.after, after)
			r.through = append(r.through, pg.NextCursor)
			r.events = append(r.events, len(pg.Events))
			n, err := portPage(actx[i], cu, after)
			if err != nil {
				return nil, fmt.Errorf("catch-up page of %s: %w", r.name, err)
			}
			if n != len(pg.Events) {
				return nil, fmt.Errorf("catch-up page of %s after %d: %d events through the port, %d over HTTP", r.name, after, n, len(pg.Events))
			}
			if _, err := bareWindow(ctx, bare, after, pg.NextCursor); err != nil {
				return nil, err
			}
		}
	}
	out := make([]pageCase, len(readers))
	type samples struct{ base, port, http []time.Duration }
	lat := make([]samples, len(readers))
	next := make([][3]int, len(readers))
	slice := d / pageRounds
	for round := range pageRounds {
		progress("catch-up pages: round %d of %d", round+1, pageRounds)
		for i, r := range readers {
			ops := []func(k int) error{
				func(k int) error {
					_, err := bareWindow(ctx, bare, r.after[k], r.through[k])
					return err
				},
				func(k int) error {
					_, err := portPage(actx[i], cu, r.after[k])
					return err
				},
				func(k int) error { return bench.GetRaw(ctx, c, pageURL(w.Base, r.after[k]), r.p.Token, &buf) },
			}
			dst := []*[]time.Duration{&lat[i].base, &lat[i].port, &lat[i].http}
			for j, op := range ops {
				l, k, err := bench.LoopFor(ctx, slice, next[i][j], func(k int) error { return op(k % len(r.after)) })
				if err != nil {
					return nil, fmt.Errorf("catch-up page of %s: %w", r.name, err)
				}
				*dst[j], next[i][j] = append(*dst[j], l...), k
			}
		}
	}
	for i, r := range readers {
		var events, seqs float64
		for k := range r.after {
			events += float64(r.events[k])
			seqs += float64(r.through[k] - r.after[k])
		}
		n := float64(len(r.after))
		l := lat[i]
		pc := pageCase{
			Reader: r.name, VisibleChannels: r.channels, Pages: len(l.port), HTTPPages: len(l.http), BaselineReads: len(l.base),
			EventsPerPage: bench.Round1(events / n), SeqsPerPage: bench.Round1(seqs / n),
			P50Ms: bench.Ms(bench.Percentile(l.port, 50)), P99Ms: bench.Ms(bench.Percentile(l.port, 99)),
			HTTPP50Ms: bench.Ms(bench.Percentile(l.http, 50)), HTTPP99Ms: bench.Ms(bench.Percentile(l.http, 99)),
			BaselineP50Ms: bench.Ms(bench.Percentile(l.base, 50)), BaselineP99Ms: bench.Ms(bench.Percentile(l.base, 99)),
		}
		pc.P50Ratio, pc.P99Ratio = bench.Round2(pc.P50Ms/pc.BaselineP50Ms), bench.Round2(pc.P99Ms/pc.BaselineP99Ms)
		pc.HTTPP50Ratio, pc.HTTPP99Ratio = bench.Round2(pc.HTTPP50Ms/pc.BaselineP50Ms), bench.Round2(pc.HTTPP99Ms/pc.BaselineP99Ms)
		out[i] = pc
	}
	return out, nil
}

// portPage reads the page after after through cu as the actor in ctx, as listEvents does
// after its authorization: Check, then Page up to the head Check read, then the page's
// Release. It returns the number of events.
func portPage(ctx context.Context, cu syncmod.CatchUp, after int64) (int, error) {
	res, err := cu.Check(ctx, syncmod.CheckInput{After: after})
	if err != nil {
		return 0, err
	}
	if err := res.Err(); err != nil {
		return 0, err
	}
	pg, err := cu.Page(ctx, syncmod.PageInput{
		After: after, Head: res.HeadSeq,
		PermissionVersion: res.PermissionVersion, PermissionVersionRead: res.PermissionVersionRead,
	})
	if err != nil {
		return 0, err
	}
	n := len(pg.Events)
	if pg.Release != nil {
		// As listEvents and the gateway do once they copied the envelopes out.
		pg.Release()
	}
	return n, nil
}

// fullCatchUp measures the owner's full catch-up over HTTP (from cursor 0, paging with
// next_cursor until it equals head_seq) against the bare read loop (bare_events_after.sql from
// 0, a page of rows at a time, until a short page), in fullRounds rounds of baseline then
// figure. The client reads each response to its end and takes next_cursor and head_seq from
// its tail; it counts the envelopes instead of decoding them (a client's JSON decoder is not
// what the figure is about), and the count must be every event the owner may receive.
func fullCatchUp(ctx context.Context, w *SyncWorld, bare *pgxpool.Pool, progress func(string, ...any)) (fullResult, error) {
	res := fullResult{Rounds: fullRounds}
	var want int64
	if err := bare.QueryRow(ctx, countEventsVisibleToOwner, w.head, w.Alex.ID).Scan(&want); err != nil {
		return res, fmt.Errorf("full catch-up: count the owner's events: %w", err)
	}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	var (
		buf                    bytes.Buffer
		figureTime, baseTime   time.Duration
		figureEvents, baseRows int64
	)
	for round := range fullRounds {
		progress("full catch-up: round %d of %d", round+1, fullRounds)
		start := time.Now()
		rows, err := bareLoop(ctx, bare, w.pageSize)
		if err != nil {
			return res, err
		}
		baseTime += time.Since(start)
		baseRows += rows

		start = time.Now()
		var (
			after, events, size int64
			pages               int
		)
		for {
			if err := bench.GetRaw(ctx, c, pageURL(w.Base, after), w.Alex.Token, &buf); err != nil {
				return res, fmt.Errorf("full catch-up after %d: %w", after, err)
			}
			next, head, err := pageTail(buf.Bytes())
			if err != nil {
				return res, fmt.Errorf("full catch-up after %d: %w", after, err)
			}
			pages++
			events += countEnvelopes(buf.Bytes())
			size += int64(buf.Len())
			if next <= after && next != head {
				return res, fmt.Errorf("full catch-up: next_cursor %d does not move on from %d", next, after)
			}
			after = next
			if after == head {
				break
			}
		}
		figureTime += time.Since(start)
		figureEvents += events
		if events != want {
			return res, fmt.Errorf("full catch-up: %d events delivered, want %d", events, want)
		}
		res.Events, res.Pages, res.BaselineRows = events, pages, rows
		res.ResponseBytesPerEvent = bench.Round1(float64(size) / float64(max(events, 1)))
	}
	res.EventsPerSecond = bench.Round1(float64(figureEvents) / figureTime.Seconds())
	res.BaselineEventsPerSecond = bench.Round1(float64(baseRows) / baseTime.Seconds())
	res.Ratio = bench.Round2(res.EventsPerSecond / res.BaselineEventsPerSecond)
	return res, nil
}

// countEnvelopes counts the envelopes of a page by their start, {"seq": and a digit
// (domain.AppendEnvelope writes seq first, without a space). A payload may start with a seq
// member too (jsonb puts the shortest keys first), but PostgreSQL's jsonb output writes a space
// after each colon; inside a string the quotes would be escaped.
func countEnvelopes(body []byte) int64 {
	return int64(bytes.Count(body, []byte(`{"seq":`)) - bytes.Count(body, []byte(`{"seq": `)))
}

// pageTail returns next_cursor and head_seq from the members after a page's events.
func pageTail(body []byte) (next, head int64, err error) {
	i := bytes.LastIndex(body, []byte(`],"next_cursor":`))
	if i < 0 {
		return 0, 0, errors.New("no next_cursor after the events")
	}
	var tail struct {
		NextCursor *int64 `json:"next_cursor"`
		HeadSeq    *int64 `json:"head_seq"`
	}
	if err := json.Unmarshal(append([]byte{'{'}, body[i+2:]...), &tail); err != nil {
		return 0, 0, fmt.Errorf("the page's tail %q does not decode: %w", body[i+2:], err)
	}
	if tail.NextCursor == nil || tail.HeadSeq == nil {
		return 0, 0, fmt.Errorf("the page's tail %q lacks next_cursor or head_seq", body[i+2:])
	}
	return *tail.NextCursor, *tail.HeadSeq, nil
}

// eventPage is what a catch-up client reads of a page.
type eventPage struct {
	Events     []json.RawMessage `json:"events"`
	NextCursor int64             `json:"next_cursor"`
	HeadSeq    int64             `json:"head_seq"`
}

func pageURL(base string, after int64) string {
	return base + "/api/v1/events?after=" + strconv.FormatInt(after, 10)
}

// getPage GETs the page after after and decodes it.
func getPage(ctx context.Context, c *http.Client, base, token string, after int64, buf *bytes.Buffer) (eventPage, error) {
	var pg eventPage
	if err := bench.GetRaw(ctx, c, pageURL(base, after), token, buf); err != nil {
		return pg, err
	}
	if err := json.Unmarshal(buf.Bytes(), &pg); err != nil {
		return pg, fmt.Errorf("decode the page after %d: %w", after, err)
	}
	return pg, nil
}

// bareRow holds one row of the bare reads, scanned into plain values.
type bareRow struct {
	seq                                              int64
	id, actor, space, channel, thread, resource, aud pgtype.UUID
	typ, kind                                        string
	occurredAt                                       time.Time
	action, correlation                              pgtype.Text
	payload, trace                                   []byte
	redacted                                         bool
}

// scanBare reads every row of the bare statement q with args into plain values and returns
// how many there were and the last seq.
func scanBare(ctx context.Context, pool *pgxpool.Pool, q string, args ...any) (n int, last int64, err error) {
	rows, err := pool.Query(ctx, q, args...)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var r bareRow
	for rows.Next() {
		if err := rows.Scan(&r.seq, &r.id, &r.typ, &r.occurredAt, &r.actor, &r.space, &r.channel, &r.thread,
			&r.kind, &r.resource, &r.aud, &r.action, &r.payload, &r.redacted, &r.correlation, &r.trace); err != nil {
			return 0, 0, err
		}
		n++
		last = r.seq
	}
	return n, last, rows.Err()
}

// bareWindow is the page baseline: the rows after < seq <= through, scanned.
func bareWindow(ctx context.Context, pool *pgxpool.Pool, after, through int64) (int, error) {
	n, _, err := scanBare(ctx, pool, bareEventsWindow, after, through)
	if err != nil {
		return 0, fmt.Errorf("bare window %d..%d: %w", after, through, err)
	}
	return n, nil
}

// bareLoop is the full catch-up's baseline: pages of pageSize rows (sync.catchup_page_size,
// the pages' size) from seq 0 until a short page; it returns the rows read.
func bareLoop(ctx context.Context, pool *pgxpool.Pool, pageSize int) (int64, error) {
	var (
		after int64
		total int64
	)
	for {
		n, last, err := scanBare(ctx, pool, bareEventsAfter, after, pageSize)
		if err != nil {
			return total, fmt.Errorf("bare loop after %d: %w", after, err)
		}
		total += int64(n)
		if n < pageSize {
			return total, nil
		}
		after = last
	}
}

// Markdown renders the catch-up section of docs/benchmarks.md through w.
func (r CatchUpResult) Markdown(w func(format string, args ...any)) {
	w("\n## Catch-up\n\n")
	w("A second App on a database of its own in the same cluster serves a world the benchmark\n")
	w("builds (in %.1f s): the owner Alex (through the App's Bootstrap), Sam and Robin, %s and\n", r.WorldSeconds, bench.Count(max(1, r.Channels/ChannelsPerSpace), "space"))
	w("%s, Sam's member grants on every tenth channel and Robin's on one, and an agent, all\n", bench.Count(r.Channels, "channel"))
	w("through the use cases over HTTP as Alex, and three feature flags (the App's DefineFlag);\n")
	w("then in bulk SQL %d threads and a log of %d generated events (a `thread.created` per\n", r.Threads, r.Events)
	w("thread, then `message.created` events of the chat use case's shape, about 300 bytes of\n")
	w("payload, spread over the threads by a hash of their number), in one INSERT ... SELECT from\n")
	w("generate_series, with the event_seq counter advanced in the same transaction and each\n")
	w("thread's last_message_seq set from the log; then VACUUM ANALYZE. The head is at %d. The App\n", r.HeadSeq)
	w("runs with the defaults `sync.catchup_page_size` %d and `sync.catchup_scan_window` %d, but\n", r.PageSize, r.ScanWindow)
	w("with `sync.catchup_max_events` set to %s: the default (1,000,000) answers a catch-up from\n", bench.Thousands(int64(r.MaxEvents)))
	w("cursor 0 over this log with 410 `too_far_behind`.\n\n")

	w("### One page\n\n")
	w("Figure: one page (default limit) from a cursor, as the reader, two ways. Through the\n")
	w("CatchUp port, as listEvents and the gateway's resume call it after their authorization:\n")
	w("Check (head, retention edge, epoch), then Page up to that head (the cached Scope's\n")
	w("permission_version read, the prefiltered read of at most one scan window with the horizon in\n")
	w("one round trip, the audience rule and authorize per row, one directory query for the actors'\n")
	w("names, the envelopes). And over HTTP: `GET /api/v1/events?after=<cursor>` on a keep-alive\n")
	w("connection, which adds the token's authentication, `events.catch_up`, the response and the\n")
	w("client reading it to its end. Baseline: the bare indexed range read of the same rows, the\n")
	w("page's seq window (cursor < seq <= its next_cursor) by the same index (each partition's\n")
	w("primary key), every column the page reads, no prefilter and no authorization, scanned into\n")
	w("plain values on a plain pgx pool. For the owner that window is the page's %d rows; for a\n", r.PageSize)
	w("partial reader it holds every row the page had to look at (up to the scan window), of\n")
	w("which the page delivers only the reader's share, so its baseline ships more rows than its\n")
	w("page. Each reader's pages start at the same %d cursors, drawn uniformly over the log; after\n", r.CursorsPerReader)
	w("a first pass over them (which also checks that the port and HTTP deliver the same events),\n")
	w("the case runs in %d rounds, each giving every reader's baseline, port pages and HTTP pages\n", r.Rounds)
	w("a quarter of the case's time. Lower is better; the ratios are figure / baseline. The\n")
	w("targets are about the port's figures.\n\n")
	w("| reader | visible channels | events/page | seqs/page | port p50 | port p99 | HTTP p50 | HTTP p99 | bare p50 | bare p99 | port ratio p50 / p99 | HTTP ratio p50 / p99 |\n")
	w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, p := range r.Pages {
		w("| %s | %d | %.1f | %.0f | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f / %.2f | %.2f / %.2f |\n",
			p.Reader, p.VisibleChannels, p.EventsPerPage, p.SeqsPerPage, p.P50Ms, p.P99Ms, p.HTTPP50Ms, p.HTTPP99Ms,
			p.BaselineP50Ms, p.BaselineP99Ms, p.P50Ratio, p.P99Ratio, p.HTTPP50Ratio, p.HTTPP99Ratio)
	}
	if len(r.Pages) == 3 && r.Pages[0].P50Ms > 0 {
		one, all := r.Pages[2], r.Pages[0]
		w("\nPer page through the port, the one-channel reader pays %.2f times (p50) and %.2f times\n",
			one.P50Ms/all.P50Ms, one.P99Ms/all.P99Ms)
		w("(p99) what the owner pays: its page looks at a whole scan window (%.0f seqs against the\n", one.SeqsPerPage)
		w("owner's %.0f) and delivers %.1f events of them.\n", all.SeqsPerPage, one.EventsPerPage)
	}

	f := r.Full
	w("\n### Full catch-up\n\n")
	w("Figure: the owner catches up over HTTP from cursor 0 to the head: `GET /api/v1/events` with\n")
	w("each page's next_cursor until it equals head_seq, one client on a keep-alive connection,\n")
	w("each response read to its end, next_cursor and head_seq taken from its tail and the\n")
	w("envelopes counted (not decoded: a client's JSON decoder is not what the figure is about);\n")
	w("the count is checked against every event the owner may receive. Baseline: a bare read loop\n")
	w("over SQL without HTTP: `seq > cursor ORDER BY seq LIMIT %d` with every column, rows\n", r.PageSize)
	w("scanned into plain values, until a short page. They run in %d rounds, baseline then figure.\n", f.Rounds)
	w("Higher is better; the ratio is figure / baseline.\n\n")
	w("| events delivered | pages | events/s | bare loop rows | bare loop events/s | ratio | response bytes/event |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %.0f | %d | %.0f | %.2f | %.0f |\n", f.Events, f.Pages, f.EventsPerSecond, f.BaselineRows,
		f.BaselineEventsPerSecond, f.Ratio, f.ResponseBytesPerEvent)
}
