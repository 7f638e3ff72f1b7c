package chatbench

import (
	"bytes"
	"context"
	_ "embed" // the thread list case's SQL
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/authz"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wire"
)

var (
	//go:embed queries/threads_owner.sql
	threadsOwner string
	//go:embed queries/seed_threads_channel.sql
	seedThreadsChannel string
	//go:embed queries/seed_threads_reads.sql
	seedThreadsReads string
	//go:embed queries/seed_threads_mentions.sql
	seedThreadsMentions string
	//go:embed queries/seed_threads_vacuum.sql
	seedThreadsVacuum string
	//go:embed queries/bare_channel_get.sql
	bareChannelGet string
	//go:embed queries/bare_threads_of_channel_page.sql
	bareThreadsOfChannelPage string
	//go:embed queries/bare_read_states_of_threads.sql
	bareReadStatesOfThreads string
	//go:embed queries/bare_mentions_unread_count_of_threads.sql
	bareMentionsUnreadCountOfThreads string
)

// ThreadListThreads is the thread list case's channel size (the -threads flag's default).
const ThreadListThreads = 10_000

// threadListRounds is how many rounds of baseline, figure and reference the case runs in. Each
// round starts with the next side (rotation), so every side runs first, second and third
// equally often: the machine's speed drifts over seconds (other guests of the host), and with a
// fixed order whichever side came second would always meet the drift at the same point. Twelve
// rounds of short slices follow the drift closer than four long ones.
const threadListRounds = 12

// threadListBareQueries is how many statements one run of the baseline issues, and
// threadListBareTrips in how many round trips (the channel and the page go in one batch, as
// the use case sends them).
const (
	threadListBareQueries = 4
	threadListBareTrips   = 3
)

// ThreadListResult is the thread list case: the first page of listChannelThreads over HTTP
// for a channel of Threads threads, beside the same answer's statements issued bare.
type ThreadListResult struct {
	Threads         int     `json:"threads"`
	PageSize        int     `json:"page_size"`
	Items           int     `json:"items"`
	UnreadItems     int     `json:"unread_items"`
	MentionedItems  int     `json:"mentioned_items"`
	Bytes           int     `json:"bytes"`
	SeedSeconds     float64 `json:"seed_seconds"`
	Requests        int     `json:"requests"`
	BaselineRuns    int     `json:"baseline_runs"`
	BaselineQueries int     `json:"baseline_queries"`
	BaselineTrips   int     `json:"baseline_round_trips"`
	P50Ms           float64 `json:"p50_ms"`
	P99Ms           float64 `json:"p99_ms"`
	BaselineP50Ms   float64 `json:"baseline_p50_ms"`
	BaselineP99Ms   float64 `json:"baseline_p99_ms"`
	P50Ratio        float64 `json:"p50_ratio"`
	P99Ratio        float64 `json:"p99_ratio"`
	// The reference: a minimal net/http handler that issues the baseline's statements and
	// writes the first page's bytes (serveMinimal), its ratio to the baseline (what HTTP alone
	// adds on this machine) and the figure's ratio to it (what bothy's stack adds).
	MinimalRequests int     `json:"minimal_requests"`
	MinimalP50Ms    float64 `json:"minimal_p50_ms"`
	MinimalP99Ms    float64 `json:"minimal_p99_ms"`
	MinimalP50Ratio float64 `json:"minimal_p50_ratio"`
	OverMinimalP50  float64 `json:"figure_over_minimal_p50"`
	// CPU per answer of each side over the measured rounds (CPUMeter): the benchmark's
	// process (the baseline's client of the statements; the figure's and the reference's
	// client and server together) and PostgreSQL. The latencies are a chain of hand-offs
	// between those processes on the machine's cores; these tell how much work each end did.
	BaselineCPU bench.SideCPU `json:"baseline_cpu"`
	FigureCPU   bench.SideCPU `json:"figure_cpu"`
	MinimalCPU  bench.SideCPU `json:"minimal_cpu"`
}

// threadListWorld is the case's channel and its reader.
type threadListWorld struct {
	base     string
	channel  uuid.UUID
	reader   uuid.UUID
	token    string
	pageSize int
	excerpt  int
}

// threadListCase seeds a channel of o.threads threads (set-based SQL: threads with their first
// messages, the reader Sam's read states and mentions of him) and measures the first page of
// listChannelThreads as Sam over HTTP (keep-alive, Accept-Encoding: identity, the body read to
// its end, not decoded) beside the same answer's statements issued bare one after another, in
// threadListRounds rounds of baseline, figure and reference in rotating order, after a warm-up
// of each.
func threadListCase(ctx context.Context, app *wire.App, bare *pgxpool.Pool, o bench.Options, progress func(string, ...any)) (res ThreadListResult, err error) {
	base, stop, err := bench.ServeLocal(ctx, app, "thread list")
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	progress("thread list: a channel of %d threads (set-based SQL)", o.Threads)
	began := time.Now()
	w, err := buildThreadListWorld(ctx, app, bare, base, o.Threads)
	if err != nil {
		return res, err
	}
	res = ThreadListResult{Threads: o.Threads, PageSize: w.pageSize, BaselineQueries: threadListBareQueries, BaselineTrips: threadListBareTrips, SeedSeconds: bench.Round1(time.Since(began).Seconds())}

	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	url := w.base + "/api/v1/channels/" + w.channel.String() + "/threads"
	get := func() error { return bench.GetRaw(ctx, c, url, w.token, &buf) }
	if err := get(); err != nil {
		return res, fmt.Errorf("thread list: %w", err)
	}
	if err := res.measureBody(buf.Bytes()); err != nil {
		return res, err
	}
	q := threadListQueries{channel: w.channel, reader: w.reader, limit: w.pageSize, excerpt: w.excerpt}
	if err := q.run(ctx, bare); err != nil {
		return res, err
	}
	minimalURL, stopMinimal, err := serveMinimal(ctx, q, bare, bytes.Clone(buf.Bytes()))
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := stopMinimal(); serr != nil && err == nil {
			err = serr
		}
	}()
	mc := bench.NewPostClient()
	defer mc.CloseIdleConnections()
	var mbuf bytes.Buffer
	getMinimal := func() error { return bench.GetRaw(ctx, mc, minimalURL, w.token, &mbuf) }
	sides := []func(int) error{
		func(int) error { return q.run(ctx, bare) },
		func(int) error { return get() },
		func(int) error { return getMinimal() },
	}
	if o.Warmup > 0 {
		for _, side := range sides {
			if _, _, err := bench.LoopFor(ctx, o.Warmup/time.Duration(len(sides)), 0, side); err != nil {
				return res, fmt.Errorf("thread list: %w", err)
			}
		}
	}
	meter, err := bench.NewCPUMeter(ctx, bare)
	if err != nil {
		return res, fmt.Errorf("thread list: %w", err)
	}
	progress("thread list: %d items on the first page (%d unread, %d mentioned), %d bytes; %d rounds", res.Items, res.UnreadItems, res.MentionedItems, res.Bytes, threadListRounds)
	// In each round the three sides in the round's order, each loop between two reads of the
	// CPU spent.
	lats := make([][]time.Duration, len(sides))
	cpu := make([]bench.CPUTally, len(sides))
	slice := o.Duration / threadListRounds
	for round := range threadListRounds {
		for _, i := range bench.Rotation(round, len(sides)) {
			side := sides[i]
			before, err := meter.Read()
			if err != nil {
				return res, fmt.Errorf("thread list: %w", err)
			}
			lat, _, err := bench.LoopFor(ctx, slice, 0, side)
			if err != nil {
				return res, fmt.Errorf("thread list: %w", err)
			}
			after, err := meter.Read()
			if err != nil {
				return res, fmt.Errorf("thread list: %w", err)
			}
			lats[i] = append(lats[i], lat...)
			cpu[i].Add(before, after, len(lat))
		}
	}
	res.BaselineCPU, res.FigureCPU, res.MinimalCPU = cpu[0].PerAnswer(), cpu[1].PerAnswer(), cpu[2].PerAnswer()
	baselines, figures, minimal := lats[0], lats[1], lats[2]
	res.Requests, res.BaselineRuns, res.MinimalRequests = len(figures), len(baselines), len(minimal)
	res.P50Ms, res.P99Ms = bench.Ms(bench.Percentile(figures, 50)), bench.Ms(bench.Percentile(figures, 99))
	res.BaselineP50Ms, res.BaselineP99Ms = bench.Ms(bench.Percentile(baselines, 50)), bench.Ms(bench.Percentile(baselines, 99))
	res.MinimalP50Ms, res.MinimalP99Ms = bench.Ms(bench.Percentile(minimal, 50)), bench.Ms(bench.Percentile(minimal, 99))
	res.P50Ratio, res.P99Ratio = bench.Round2(res.P50Ms/res.BaselineP50Ms), bench.Round2(res.P99Ms/res.BaselineP99Ms)
	res.MinimalP50Ratio, res.OverMinimalP50 = bench.Round2(res.MinimalP50Ms/res.BaselineP50Ms), bench.Round2(res.P50Ms/res.MinimalP50Ms)
	return res, nil
}

// serveMinimal serves the thread list case's reference on a loopback port (serveHandler): a
// net/http handler with nothing of bothy in it (no middleware, no authentication, no use case,
// no encoding) that issues the baseline's statements on pool and writes body, the first page's
// bytes as bothy sent them. Fetched like the figure, it is what HTTP alone adds to the
// statements on this machine, so the report can tell that apart from what bothy's stack adds.
func serveMinimal(ctx context.Context, q threadListQueries, pool *pgxpool.Pool, body []byte) (url string, stop func() error, err error) {
	addr, stop, err := bench.ServeHandler(ctx, "thread list reference", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := q.run(r.Context(), pool); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	if err != nil {
		return "", nil, err
	}
	return "http://" + addr + "/", stop, nil
}

// measureBody checks the first page and records its size and how many of its items carry
// unread messages and unread mentions.
func (r *ThreadListResult) measureBody(body []byte) error {
	var page struct {
		Items []struct {
			UnreadCount  int64 `json:"unread_count"`
			MentionCount int64 `json:"mention_count"`
		} `json:"items"`
		NextCursor string `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return fmt.Errorf("thread list: decode: %w", err)
	}
	r.Bytes, r.Items = len(body), len(page.Items)
	for _, it := range page.Items {
		if it.UnreadCount > 0 {
			r.UnreadItems++
		}
		if it.MentionCount > 0 {
			r.MentionedItems++
		}
	}
	if r.Items != min(r.PageSize, r.Threads) || (r.Threads > r.PageSize && page.NextCursor == "") {
		return fmt.Errorf("thread list: the first page has %d items (next cursor %q), want %d", r.Items, page.NextCursor, min(r.PageSize, r.Threads))
	}
	return nil
}

// buildThreadListWorld finds or bootstraps the owner, creates over HTTP as the owner a space,
// a channel and Sam (a member of the channel), then seeds the channel's threads, Sam's read
// states and the mentions of him in bulk SQL.
func buildThreadListWorld(ctx context.Context, app *wire.App, bare *pgxpool.Pool, base string, threads int) (threadListWorld, error) {
	cfg, err := config.Load("", nil)
	if err != nil {
		return threadListWorld{}, fmt.Errorf("thread list: the defaults: %w", err)
	}
	list := chatapp.ThreadListConfigFrom(cfg)
	w := threadListWorld{base: base, pageSize: list.PageSize, excerpt: list.ExcerptChars}
	ownerID, secret, err := app.Ports().Owners.Bootstrap(ctx, "Alex", "alex", "alex@example.com")
	created := err == nil
	if errors.Is(err, authz.ErrOwnerExists) {
		err = nil
	}
	if err != nil {
		return w, fmt.Errorf("thread list: owner: %w", err)
	}
	ownerToken := ""
	if created {
		ownerToken = secret.Reveal()
	} else {
		if err := bare.QueryRow(ctx, threadsOwner).Scan(&ownerID); err != nil {
			return w, fmt.Errorf("thread list: find the owner: %w", err)
		}
		tok, err := app.Ports().Tokens.Issue(ctx, ownerID, nil)
		if err != nil {
			return w, fmt.Errorf("thread list: owner's token: %w", err)
		}
		ownerToken = tok.Token.Reveal()
	}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	create := func(path string, body any) (uuid.UUID, error) {
		return bench.CreateID(ctx, c, base+path, ownerToken, body)
	}
	space, err := create("/api/v1/spaces", map[string]string{"name": "Threads"})
	if err != nil {
		return w, fmt.Errorf("thread list: space: %w", err)
	}
	if w.channel, err = create("/api/v1/spaces/"+space.String()+"/channels", map[string]string{"name": "busy"}); err != nil {
		return w, fmt.Errorf("thread list: channel: %w", err)
	}
	if w.reader, err = create("/api/v1/people", map[string]string{"display_name": "Sam", "handle": "sam", "email": "sam@example.com"}); err != nil {
		return w, fmt.Errorf("thread list: Sam: %w", err)
	}
	if _, err := create("/api/v1/grants", map[string]string{
		"principal_id": w.reader.String(), "resource_kind": "channel", "resource_id": w.channel.String(), "role": "member",
	}); err != nil {
		return w, fmt.Errorf("thread list: grant: %w", err)
	}
	tok, err := app.Ports().Tokens.Issue(ctx, w.reader, nil)
	if err != nil {
		return w, fmt.Errorf("thread list: Sam's token: %w", err)
	}
	w.token = tok.Token.Reveal()
	for _, s := range []struct {
		name string
		sql  string
		args []any
	}{
		{"threads", seedThreadsChannel, []any{w.channel, space, ownerID, threads}},
		{"read states", seedThreadsReads, []any{w.reader, w.channel}},
		{"mentions", seedThreadsMentions, []any{w.channel, w.reader, ownerID}},
		{"vacuum", seedThreadsVacuum, nil},
	} {
		if _, err := bare.Exec(ctx, s.sql, s.args...); err != nil {
			return w, fmt.Errorf("thread list: seed %s: %w", s.name, err)
		}
	}
	return w, nil
}

// threadListQueries is the thread list's baseline: the statements of the same answer, issued
// bare in the use case's order on the bare pool, with the parameters the use case passes and
// each result scanned into plain values: the channel row and the first page of threads with
// the reader's newest mention seqs in each (one batch, one round trip, as the use case sends
// them), the permission_version read that stands for the cached Scope, and the reader's read
// states of the page's threads; then, only for threads whose mention seqs stop above the
// reader's read position (none in this world), the count of the reader's unread mentions in
// them. Nothing is authorized, counted, encoded or sent. The request itself also
// authenticates the token.
type threadListQueries struct {
	channel, reader uuid.UUID
	limit, excerpt  int
}

// run issues the statements once.
func (q threadListQueries) run(ctx context.Context, pool *pgxpool.Pool) error {
	if err := q.run1(ctx, pool); err != nil {
		return fmt.Errorf("thread list baseline: %w", err)
	}
	return nil
}

func (q threadListQueries) run1(ctx context.Context, pool *pgxpool.Pool) error {
	var (
		n, seq, floor int64
		id, ch, by    uuid.UUID
		space         pgtype.UUID
		name          string
		when, at      time.Time
		archived      pgtype.Timestamptz
		participants  []uuid.UUID
		redacted      bool
		mentioned     []int64
	)
	first := pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	maxID := uuid.UUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	var b pgx.Batch
	b.Queue(bareChannelGet, q.channel)
	b.Queue(bareThreadsOfChannelPage, q.channel, first, maxID, q.limit, q.excerpt, q.reader, chatpg.PageMentionSeqs)
	res := pool.SendBatch(ctx, &b)
	ids := make([]uuid.UUID, 0, q.limit)
	seqs := make([][]int64, 0, q.limit)
	err := func() error {
		if err := res.QueryRow().Scan(&id, &space, &name, &name, &name, &n, &archived, &when, &participants); err != nil {
			return fmt.Errorf("channel: %w", err)
		}
		rows, err := res.Query()
		if err != nil {
			return fmt.Errorf("threads: %w", err)
		}
		_, err = pgx.ForEachRow(rows, []any{&id, &ch, &space, &name, &by, &when, &n, &seq, &floor, &at, &name, &redacted, &mentioned}, func() error {
			ids, seqs = append(ids, id), append(seqs, mentioned)
			mentioned = nil
			return nil
		})
		if err != nil {
			return fmt.Errorf("threads: %w", err)
		}
		return nil
	}()
	if cerr := res.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("channel and threads: %w", cerr)
	}
	if err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, bench.BarePermissionVersion, "permission_version").Scan(&n); err != nil {
		return fmt.Errorf("permission version: %w", err)
	}
	var thread uuid.UUID
	read := make(map[uuid.UUID]int64, len(ids))
	err = bench.Each(ctx, pool, bareReadStatesOfThreads, []any{q.reader, ids}, func() error {
		read[thread] = seq
		return nil
	}, &id, &thread, &ch, &seq, &n)
	if err != nil {
		return fmt.Errorf("read states: %w", err)
	}
	var rest []uuid.UUID
	var restSeqs []int64
	for i, t := range ids {
		if s := seqs[i]; len(s) == chatpg.PageMentionSeqs && s[len(s)-1] > read[t] {
			rest, restSeqs = append(rest, t), append(restSeqs, read[t])
		}
	}
	if len(rest) == 0 {
		return nil
	}
	if err := bench.Each(ctx, pool, bareMentionsUnreadCountOfThreads, []any{q.reader, q.channel, rest, restSeqs}, &thread, &n); err != nil {
		return fmt.Errorf("mentions: %w", err)
	}
	return nil
}

// Markdown renders the thread list section of docs/benchmarks.md through w.
func (r ThreadListResult) Markdown(w func(format string, args ...any)) {
	w("\n## listChannelThreads\n\n")
	w("A channel of %d threads seeded in bulk SQL (%.1f s): each with its first message and 1 to 20\n", r.Threads, r.SeedSeconds)
	w("messages, its last activity spread over 30 days; Sam, a member of the channel, has read six\n")
	w("threads in ten (four to the end, two up to their first message) and is mentioned in the\n")
	w("newest message of one in ten of the threads with replies he has not read to the end, counted\n")
	w("newest first. His first page (the default page size, `chat.threads_page_size`) has %d\n", r.Items)
	w("items, %d with unread messages and %d with an unread mention; %d bytes of JSON.\n\n", r.UnreadItems, r.MentionedItems, r.Bytes)
	w("Figure: `GET /api/v1/channels/{id}/threads` (the first page) as Sam over HTTP on a keep-alive\n")
	w("connection with `Accept-Encoding: identity`, the body read to its end, not decoded (no\n")
	w("If-None-Match). Baseline: the same answer's statements issued bare, %d in %d round trips\n", r.BaselineQueries, r.BaselineTrips)
	w("on a plain pgx pool, in the use case's order: the channel row and the page of threads with\n")
	w("Sam's newest mention seqs in each (the use case's batch), the permission_version read that\n")
	w("stands for the cached Scope, and Sam's read states of the page's threads (sync's); each\n")
	w("result scanned into plain values (the unread mentions of a thread whose mention seqs stop\n")
	w("above Sam's read position would take a fifth statement, in the use case and the baseline\n")
	w("alike; none does here). The request also authenticates its token, authorizes, computes the\n")
	w("counts, encodes the page and hashes it for its ETag. Reference: a minimal net/http handler\n")
	w("in the benchmark, with nothing of bothy in it, that issues the baseline's statements and\n")
	w("writes the first page's bytes, fetched like the figure: what HTTP alone adds to the\n")
	w("statements on this machine. The case runs in %d rounds of baseline, figure and reference,\n", threadListRounds)
	w("each round starting with the next of the three, after a warm-up. Lower is better; the ratios\n")
	w("are figure / baseline.\n\n")
	w("| threads | page | p50 | p99 | bare p50 | bare p99 | p50 ratio | p99 ratio |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f | %.2f |\n", r.Threads, r.Items,
		r.P50Ms, r.P99Ms, r.BaselineP50Ms, r.BaselineP99Ms, r.P50Ratio, r.P99Ratio)
	w("\n| reference | p50 | p99 | reference / baseline (p50) | figure / reference (p50) |\n")
	w("| --- | ---: | ---: | ---: | ---: |\n")
	w("| minimal net/http handler, same statements and bytes | %.2f ms | %.2f ms | %.2f | %.2f |\n",
		r.MinimalP50Ms, r.MinimalP99Ms, r.MinimalP50Ratio, r.OverMinimalP50)
	w("\nCPU per answer over the measured rounds: the benchmark's process (for the baseline the\n")
	w("client of the statements; for the figure and the reference the HTTP client and the server,\n")
	w("which share the process) and the cluster's PostgreSQL processes. On this machine's %d cores\n", runtime.NumCPU())
	w("the three share, the work of one end slows the others, which the latencies alone do not show.\n\n")
	w("| side | benchmark process | PostgreSQL |\n")
	w("| --- | ---: | ---: |\n")
	for _, s := range []struct {
		name string
		cpu  bench.SideCPU
	}{{"baseline (bare statements)", r.BaselineCPU}, {"figure (listChannelThreads over HTTP)", r.FigureCPU}, {"reference (minimal net/http handler)", r.MinimalCPU}} {
		w("| %s | %.3f ms | %.3f ms |\n", s.name, s.cpu.ProcessMs, s.cpu.PostgresMs)
	}
}
