package logbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wire"
)

const (
	// postClients is how many HTTP clients post at once (16 concurrent clients, as the figure is defined); the
	// baseline runs the bare loop with as many writers.
	postClients = 16
	// postRounds is how many rounds the postMessage case runs in, like the append cases.
	postRounds = 4
)

// PostResult is the postMessage case: the figures of each thread layout beside the bare append
// loop with as many writers and one event per transaction, measured in the same rounds.
type PostResult struct {
	Clients                 int        `json:"clients"`
	Rounds                  int        `json:"rounds"`
	BaselineEventsPerSecond float64    `json:"baseline_events_per_second"`
	BaselineTransactions    int64      `json:"baseline_transactions"`
	Cases                   []postCase `json:"cases"`
	// admission is sync.append_concurrency, which the section's text names.
	admission int
}

// postCase is one thread layout: every client posting into its own thread, or all of them
// into one.
type postCase struct {
	Name              string  `json:"name"`
	Threads           int     `json:"threads"`
	Requests          int64   `json:"requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
	// Ratio is requests/s over the bare loop's events/s.
	Ratio float64 `json:"ratio"`
}

// The names of the two layouts; the target is about the first.
const (
	postOwnThreads   = "one thread per client"
	postSharedThread = "one shared thread"
)

// poster is one benchmark client: its own connection pool (a transport sized for the one
// request it has in flight, kept alive between requests) and the thread it posts into.
type poster struct {
	client *http.Client
	url    string
}

// postBench is the served App and what the case created in it.
type postBench struct {
	base   string
	token  string
	own    []string // thread ids, one per client
	shared string   // the thread every client posts into in the shared case
}

// postMessageCase wires what postMessage needs on app (an owner, Alex, with a token; a space, a
// channel and postClients+1 threads, all created over HTTP), serves the App on a listener on
// 127.0.0.1:0 as bothy serve does, and measures postClients clients that POST a message at a
// time each. After a warm-up (half of o.warmup for the baseline, half for the clients), the case
// runs in postRounds rounds; each runs, for o.duration/postRounds each, the bare append loop
// with postClients writers and one event per transaction (the baseline, the same loop as the
// append table's), the clients on a thread each, and the clients on one shared thread, so
// drift on the machine hits the figures and their baseline alike.
func postMessageCase(ctx context.Context, app *wire.App, bare *pgxpool.Pool, o bench.Options, progress func(string, ...any)) (res PostResult, err error) {
	progress("postMessage: owner, space, channel and %d threads over HTTP; warm-up", postClients+1)
	url, stop, err := bench.ServeLocal(ctx, app, "postMessage")
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	pb, err := setUpPosting(ctx, app, url)
	if err != nil {
		return res, err
	}
	own := make([]poster, postClients)
	shared := make([]poster, postClients)
	for i := range postClients {
		c := bench.NewPostClient()
		defer c.CloseIdleConnections()
		own[i] = poster{client: c, url: pb.base + "/api/v1/threads/" + pb.own[i] + "/messages"}
		shared[i] = poster{client: c, url: pb.base + "/api/v1/threads/" + pb.shared + "/messages"}
	}
	base := func(ctx context.Context, ev []kernel.Event) error { return bench.AppendBare(ctx, bare, ev) }
	if o.Warmup > 0 {
		if _, _, err := bench.Drive(ctx, postClients, 1, o.Warmup/2, base); err != nil {
			return res, fmt.Errorf("postMessage baseline warm-up: %w", err)
		}
		if _, err := postLoad(ctx, own, pb.token, o.Warmup/2); err != nil {
			return res, fmt.Errorf("postMessage warm-up: %w", err)
		}
	}

	layouts := []struct {
		name    string
		threads int
		posters []poster
	}{{postOwnThreads, postClients, own}, {postSharedThread, 1, shared}}
	samples := make([][]time.Duration, len(layouts))
	rates := make([]float64, len(layouts))
	res = PostResult{Clients: postClients, Rounds: postRounds, Cases: make([]postCase, len(layouts))}
	var baseRate float64
	slice := o.Duration / postRounds
	for round := range postRounds {
		progress("postMessage: round %d of %d", round+1, postRounds)
		rate, n, err := bench.Drive(ctx, postClients, 1, slice, base)
		if err != nil {
			return res, fmt.Errorf("postMessage baseline: %w", err)
		}
		baseRate += rate / postRounds
		res.BaselineTransactions += n
		for i, l := range layouts {
			m, err := postLoad(ctx, l.posters, pb.token, slice)
			if err != nil {
				return res, fmt.Errorf("postMessage, %s: %w", l.name, err)
			}
			rates[i] += m.perSecond / postRounds
			samples[i] = append(samples[i], m.latencies...)
		}
	}
	res.BaselineEventsPerSecond = bench.Round1(baseRate)
	for i, l := range layouts {
		if len(samples[i]) == 0 {
			return res, fmt.Errorf("postMessage, %s: no request finished", l.name)
		}
		res.Cases[i] = postCase{
			Name: l.name, Threads: l.threads, Requests: int64(len(samples[i])),
			RequestsPerSecond: bench.Round1(rates[i]),
			P50Ms:             bench.Ms(bench.Percentile(samples[i], 50)), P99Ms: bench.Ms(bench.Percentile(samples[i], 99)),
			Ratio: bench.Round2(rates[i] / baseRate),
		}
	}
	return res, nil
}

// setUpPosting bootstraps the owner and creates, over HTTP as the owner, a space, a channel,
// a thread per client and the shared thread.
func setUpPosting(ctx context.Context, app *wire.App, base string) (postBench, error) {
	ownerID, ownerToken, err := app.Ports().Owners.Bootstrap(ctx, "Alex", "alex", "alex@example.com")
	if err != nil {
		return postBench{}, fmt.Errorf("postMessage: bootstrap the owner: %w", err)
	}
	_ = ownerID
	pb := postBench{base: base, token: ownerToken.Reveal()}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	create := func(path string, body any) (string, error) {
		raw, err := json.Marshal(body)
		if err != nil {
			return "", err
		}
		out, err := bench.Post(ctx, c, base+path, pb.token, raw, http.StatusCreated)
		if err != nil {
			return "", err
		}
		var created struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &created); err != nil || created.ID == "" {
			return "", fmt.Errorf("POST %s: no id in %s", path, out)
		}
		return created.ID, nil
	}
	space, err := create("/api/v1/spaces", map[string]string{"name": "Benchmark"})
	if err != nil {
		return pb, fmt.Errorf("postMessage: create the space: %w", err)
	}
	channel, err := create("/api/v1/spaces/"+space+"/channels", map[string]string{"name": "load"})
	if err != nil {
		return pb, fmt.Errorf("postMessage: create the channel: %w", err)
	}
	thread := func(title string) (string, error) {
		id, err := create("/api/v1/channels/"+channel+"/threads", map[string]string{"title": title, "content_md": bench.PostContent})
		if err != nil {
			return "", fmt.Errorf("postMessage: create thread %q: %w", title, err)
		}
		return id, nil
	}
	for i := range postClients {
		id, err := thread(fmt.Sprintf("Client %d", i+1))
		if err != nil {
			return pb, err
		}
		pb.own = append(pb.own, id)
	}
	if pb.shared, err = thread("Everyone"); err != nil {
		return pb, err
	}
	return pb, nil
}

// postMeasure is one run of postLoad.
type postMeasure struct {
	perSecond float64
	latencies []time.Duration
}

// postLoad runs one goroutine per poster, each posting one message at a time until d has
// passed, and returns the requests per second and every request's latency (from building the
// request to having read the whole response). A request started before the deadline counts,
// and the rate is over the time until the last one finished, as drive counts transactions.
func postLoad(ctx context.Context, posters []poster, token string, d time.Duration) (postMeasure, error) {
	body, err := json.Marshal(map[string]string{"content_md": bench.PostContent})
	if err != nil {
		return postMeasure{}, err
	}
	var (
		wg       gosync.WaitGroup
		errOnce  gosync.Once
		firstErr error
	)
	lat := make([][]time.Duration, len(posters))
	start := time.Now()
	deadline := start.Add(d)
	for i, p := range posters {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				began := time.Now()
				if _, err := bench.Post(ctx, p.client, p.url, token, body, http.StatusCreated); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				lat[i] = append(lat[i], time.Since(began))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(firstErr, ctx.Err()); err != nil {
		return postMeasure{}, err
	}
	var m postMeasure
	for _, l := range lat {
		m.latencies = append(m.latencies, l...)
	}
	m.perSecond = float64(len(m.latencies)) / elapsed.Seconds()
	return m, nil
}

// markdown renders the postMessage section of docs/benchmarks.md through w; admission is
// sync.append_concurrency, for the note on a figure above its baseline.
func (p PostResult) markdown(w func(format string, args ...any), admission int) {
	w("\n## postMessage over HTTP\n\n")
	w("Figure: `POST /api/v1/threads/{thread_id}/messages` (postMessage) from %d clients at once,\n", p.Clients)
	w("each with a connection pool of its own (net/http, HTTP/1.1 with keep-alive on 127.0.0.1) and\n")
	w("one request in flight, posting its next message as soon as it has read the previous response:\n")
	w("a one-line message without mentions, as the instance owner with a bearer token and without an\n")
	w("`Idempotency-Key`, to the wired App served as `bothy serve` serves it (logging at warn, so no\n")
	w("access-log line is written). A request pays the HTTP exchange and the router's middleware,\n")
	w("authentication of the token (one query), the JSON decoding, the thread's read, authorization\n")
	w("(`message.create`, with the permission_version read that proves the cached Scope current),\n")
	w("then one transaction: BEGIN, the per-thread seq UPDATE (which locks the thread's row until\n")
	w("COMMIT), the message INSERT, and the event append with its final round trip (the event_seq\n")
	w("counter UPDATE, the event INSERT, the NOTIFY and the COMMIT, ADR 0014); then the JSON\n")
	w("response. Latency runs from building the request to having read the whole response.\n")
	w("Baseline: the bare append loop of the append table with %d writers and one event per\n", p.Clients)
	w("transaction (BEGIN; counter UPDATE; INSERT; COMMIT), which has none of that but the event.\n")
	w("After a warm-up, the case runs in %d rounds; each runs the baseline and then each layout for\n", p.Rounds)
	w("1/%d of the case's time, so drift on the machine hits them alike. The ratio is requests/s\n", p.Rounds)
	w("over the bare loop's events/s; higher is better.\n\n")
	w("| threads | requests/s | p50 | p99 | bare loop events/s | ratio |\n")
	w("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	above := false
	for _, c := range p.Cases {
		w("| %s (%d) | %.0f | %.2f ms | %.2f ms | %.0f | %.2f |\n", c.Name, c.Threads, c.RequestsPerSecond, c.P50Ms, c.P99Ms, p.BaselineEventsPerSecond, c.Ratio)
		above = above || c.Ratio > 1
	}
	w("\nThe target is about the first layout: posts into different threads commit side by side, as\n")
	w("the bare loop's transactions do. Posts into one thread serialize on its row lock: each holds\n")
	w("it from its seq UPDATE until its COMMIT is durable, so the next post's UPDATE waits for the\n")
	w("previous post's message INSERT, event append and commit flush, and commits of that thread\n")
	w("cannot share a flush. That is the price of per-thread seqs without gap or duplicate; the\n")
	w("shared layout shows it and is no target.\n")
	if above {
		w("\nA figure above its baseline is no error: the bare loop's %d writers all queue for the\n", p.Clients)
		w("event_seq row lock inside PostgreSQL, while the appender lets at most %d transactions of the\n", admission)
		w("process into that locked section at once (`sync.append_concurrency`, as in the append table)\n")
		w("and the rest of each request overlaps with the other requests' commits.\n")
	}
}
