package chatbench

import (
	"bytes"
	"context"
	_ "embed" // the search world's seeding SQL
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	chatapp "bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/wire"
)

var (
	//go:embed queries/seed_search_threads.sql
	seedSearchThreads string
	//go:embed queries/seed_search_messages.sql
	seedSearchMessages string
	//go:embed queries/seed_search_vacuum.sql
	seedSearchVacuum string
	//go:embed queries/count_search_visible.sql
	countSearchVisible string
)

// The shape of the search world.
const (
	// searchVocabulary is how many distinct words the generated messages draw from (at most
	// 16^3, see searchWord).
	searchVocabulary = 2000
	// searchQueries is how many distinct queries the case cycles through: single words of
	// vocabulary ranks spread between searchRankFrom and searchRankTo (rarer words towards the
	// end), and every fifth query a pair of a common and a rarer word.
	searchQueries  = 40
	searchRankFrom = 20
	searchRankTo   = 400
	// searchRounds is how many rounds the case runs in, like the page cases.
	searchRounds = 4
)

// SearchResult is the search section of the report: searchMessages over HTTP as a reader who
// sees 10% of the channels, beside the bare SQL of the same answer.
type SearchResult struct {
	Messages        int     `json:"messages"`
	Channels        int     `json:"channels"`
	Threads         int     `json:"threads"`
	VisibleChannels int     `json:"visible_channels"`
	Queries         int     `json:"queries"`
	MatchesPerQuery float64 `json:"visible_matches_per_query"`
	HitsPerPage     float64 `json:"hits_per_page"`
	PageSize        int     `json:"page_size"`
	WorldSeconds    float64 `json:"world_seconds"`
	SeedSeconds     float64 `json:"seed_seconds"`
	Rounds          int     `json:"rounds"`
	Requests        int     `json:"requests"`
	BaselineReads   int     `json:"baseline_reads"`
	P50Ms           float64 `json:"p50_ms"`
	P99Ms           float64 `json:"p99_ms"`
	BaselineP50Ms   float64 `json:"baseline_p50_ms"`
	BaselineP99Ms   float64 `json:"baseline_p99_ms"`
	P50Ratio        float64 `json:"p50_ratio"`
	P99Ratio        float64 `json:"p99_ratio"`
}

// searchCase wires an App on a scratch database of the cluster at url, serves it on
// 127.0.0.1:0, builds the search world (buildSearchWorld) and measures searchMessages.
func searchCase(ctx context.Context, o bench.Options, clusterURL string, logger *slog.Logger, progress func(string, ...any)) (res SearchResult, err error) {
	dbURL, drop, err := bench.ScratchDatabase(ctx, clusterURL, "bothy_search")
	if err != nil {
		return res, err
	}
	defer func() {
		if derr := drop(); derr != nil && err == nil {
			err = derr
		}
	}()
	cfg, err := config.Load("", []string{
		config.DatabaseURL.EnvName() + "=" + dbURL,
		config.DatabaseMaxConns.EnvName() + "=" + strconv.Itoa(bench.MaxConns),
	})
	if err != nil {
		return res, fmt.Errorf("search configuration: %w", err)
	}
	chatCfg := chatapp.ConfigFrom(cfg)
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true, Roles: []string{wire.RoleAPI}})
	if err != nil {
		return res, fmt.Errorf("search wire: %w", err)
	}
	defer app.Close()
	bare, err := wire.NewPool(ctx, dbURL, bench.MaxConns)
	if err != nil {
		return res, err
	}
	defer bare.Close()
	base, stop, err := bench.ServeLocal(ctx, app, "search")
	if err != nil {
		return res, err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	began := time.Now()
	w, seedTime, err := buildSearchWorld(ctx, app, bare, base, o.SearchMessages, o.SyncChannels, progress)
	if err != nil {
		return res, err
	}
	res = SearchResult{
		Messages: o.SearchMessages, Channels: len(w.Channels), Threads: len(w.Threads), VisibleChannels: len(w.samChannels),
		Queries: searchQueries, PageSize: chatCfg.SearchPageSize, Rounds: searchRounds,
		WorldSeconds: bench.Round1(time.Since(began).Seconds()), SeedSeconds: bench.Round1(seedTime.Seconds()),
	}
	return res, measureSearch(ctx, w, bare, chatCfg, o.Duration, &res, progress)
}

// searchWorld is what buildSearchWorld made.
type searchWorld struct {
	syncbench.SyncWorld             // base, alex, sam, spaces, channels, threads
	samChannels         []uuid.UUID // the channels Sam holds a grant on: every tenth
}

// buildSearchWorld builds, like the sync world, through the use cases over HTTP the owner
// Alex (bootstrapped), Sam, the spaces and channels and Sam's member grants on every tenth
// channel; then in bulk SQL threadsPerChannel threads per channel and messages messages over
// them, with the GIN index of message search dropped during the insert and built again after
// (as a restore would), then VACUUM ANALYZE. It returns the world and the time of the bulk SQL.
func buildSearchWorld(ctx context.Context, app *wire.App, bare *pgxpool.Pool, base string, messages, channels int, progress func(string, ...any)) (*searchWorld, time.Duration, error) {
	w := &searchWorld{SyncWorld: syncbench.SyncWorld{Base: base}}
	progress("search world: people, %d spaces, %d channels and Sam's grants over HTTP", max(1, channels/syncbench.ChannelsPerSpace), channels)
	ownerID, ownerToken, err := app.Ports().Owners.Bootstrap(ctx, "Alex", "alex", "alex@example.com")
	if err != nil {
		return nil, 0, fmt.Errorf("search world: bootstrap the owner: %w", err)
	}
	w.Alex = syncbench.Person{Name: "Alex", ID: ownerID, Token: ownerToken.Reveal()}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	if w.Sam, err = w.CreatePerson(ctx, app, c, "Sam", "sam"); err != nil {
		return nil, 0, err
	}
	for i := range max(1, channels/syncbench.ChannelsPerSpace) {
		id, err := w.Create(ctx, c, "/api/v1/spaces", map[string]string{"name": fmt.Sprintf("Space %02d", i+1)})
		if err != nil {
			return nil, 0, fmt.Errorf("search world: create a space: %w", err)
		}
		w.Spaces = append(w.Spaces, id)
	}
	w.Channels = make([]uuid.UUID, channels)
	err = syncbench.Parallel(ctx, channels, func(ctx context.Context, c *http.Client, i int) error {
		id, err := w.Create(ctx, c, "/api/v1/spaces/"+w.SpaceOf(i).String()+"/channels", map[string]string{"name": fmt.Sprintf("channel-%04d", i+1)})
		w.Channels[i] = id
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("search world: create the channels: %w", err)
	}
	var granted []int
	for i := range channels {
		if i%syncbench.PageShare == 0 {
			granted = append(granted, i)
			w.samChannels = append(w.samChannels, w.Channels[i])
		}
	}
	if err := w.Grant(ctx, w.Sam, granted); err != nil {
		return nil, 0, err
	}

	began := time.Now()
	threadIDs := make([]uuid.UUID, 0, channels*syncbench.ThreadsPerChannel)
	threadChannels := make([]uuid.UUID, 0, cap(threadIDs))
	threadSpaces := make([]uuid.UUID, 0, cap(threadIDs))
	for i, ch := range w.Channels {
		for range syncbench.ThreadsPerChannel {
			threadIDs = append(threadIDs, ids.New())
			threadChannels = append(threadChannels, ch)
			threadSpaces = append(threadSpaces, w.SpaceOf(i))
		}
	}
	w.Threads = threadIDs
	progress("search world: %d threads and %d messages in bulk SQL", len(threadIDs), messages)
	if _, err := bare.Exec(ctx, seedSearchThreads, threadIDs, threadChannels, threadSpaces, w.Alex.ID, messages); err != nil {
		return nil, 0, fmt.Errorf("search world: threads: %w", err)
	}
	var indexDef string
	if err := bare.QueryRow(ctx, "SELECT pg_get_indexdef('chat.messages_search'::regclass)").Scan(&indexDef); err != nil {
		return nil, 0, fmt.Errorf("search world: read the search index: %w", err)
	}
	if _, err := bare.Exec(ctx, "DROP INDEX chat.messages_search"); err != nil {
		return nil, 0, fmt.Errorf("search world: drop the search index: %w", err)
	}
	if _, err := bare.Exec(ctx, seedSearchMessages, threadIDs, threadChannels, messages, w.Alex.ID, searchVocabulary, searchSyllables); err != nil {
		return nil, 0, fmt.Errorf("search world: messages: %w", err)
	}
	progress("search world: %d messages inserted in %.1f s; building the search index", messages, time.Since(began).Seconds())
	conn, err := bare.Acquire(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET maintenance_work_mem = '256MB'"); err != nil {
		return nil, 0, err
	}
	if _, err := conn.Exec(ctx, indexDef); err != nil {
		return nil, 0, fmt.Errorf("search world: build the search index: %w", err)
	}
	if _, err := conn.Exec(ctx, "RESET maintenance_work_mem"); err != nil {
		return nil, 0, err
	}
	if _, err := bare.Exec(ctx, seedSearchVacuum); err != nil {
		return nil, 0, fmt.Errorf("search world: vacuum: %w", err)
	}
	return w, time.Since(began), nil
}

// searchSyllables spell the search world's words: word k is the syllables of its three
// base-16 digits, lowest first, so the 4,096 words below 16^3 are distinct and the seeding SQL
// spells them with three array lookups (queries/seed_search_messages.sql).
var searchSyllables = []string{"ba", "ke", "lo", "mi", "nu", "ra", "si", "to", "ve", "zo", "da", "fe", "gi", "ho", "ju", "pa"}

// searchWord spells word k of the vocabulary, as the seeding SQL does.
func searchWord(k int) string {
	return searchSyllables[k%16] + searchSyllables[k/16%16] + searchSyllables[k/256%16]
}

// searchQueryTexts are the case's queries: words by their rank k in the seeding's
// log-uniform draw (a lower rank is a more common word).
func searchQueryTexts() []string {
	out := make([]string, searchQueries)
	for i := range out {
		rank := searchRankFrom + i*(searchRankTo-searchRankFrom)/(searchQueries-1)
		out[i] = searchWord(rank)
		if i%5 == 4 {
			out[i] = searchWord(searchRankFrom/2) + " " + searchWord(rank)
		}
	}
	return out
}

// measureSearch measures searchMessages as Sam over HTTP (GET /api/v1/search/messages?q= on a
// keep-alive connection, the response read to its end) against the bare SQL of the same
// answer: the statement the store runs (chatpg.SearchMessagesSQL) with the arguments Sam's
// Scope gives it (his granted channels), scanned into plain values on a plain pgx pool, no
// HTTP, no authentication, no query check, no authorization. A first pass checks that both
// give the same messages in the same order; then searchRounds rounds, each giving the
// baseline and the figure a quarter of d and at least a quarter of the queries.
func measureSearch(ctx context.Context, w *searchWorld, bare *pgxpool.Pool, cfg chatapp.Config, d time.Duration, res *SearchResult, progress func(string, ...any)) error {
	queries := searchQueryTexts()
	specs := make([]chatapp.SearchSpec, len(queries))
	urls := make([]string, len(queries))
	for i, q := range queries {
		specs[i] = chatapp.SearchSpec{
			Text: q, Visible: chatapp.SearchVisibility{ChannelIDs: w.samChannels},
			Limit: cfg.SearchPageSize, ExcerptWords: cfg.SearchExcerptWords,
		}
		urls[i] = w.Base + "/api/v1/search/messages?" + url.Values{"q": {q}}.Encode()
	}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	var buf bytes.Buffer
	var matches, hits int64
	progress("search: first pass over %d queries", len(queries))
	for i := range queries {
		got, err := searchHTTP(ctx, c, urls[i], w.Sam.Token, &buf)
		if err != nil {
			return err
		}
		want, err := bareSearch(ctx, bare, specs[i])
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("search %q: HTTP found %d messages, bare SQL %d, or in another order", queries[i], len(got), len(want))
		}
		var n int64
		if err := bare.QueryRow(ctx, countSearchVisible, queries[i], w.samChannels).Scan(&n); err != nil {
			return fmt.Errorf("search %q: count: %w", queries[i], err)
		}
		matches += n
		hits += int64(len(got))
	}
	res.MatchesPerQuery = bench.Round1(float64(matches) / float64(len(queries)))
	res.HitsPerPage = bench.Round1(float64(hits) / float64(len(queries)))
	var base, fig []time.Duration
	next := [2]int{}
	for round := range searchRounds {
		progress("search: round %d of %d", round+1, searchRounds)
		ops := []func(k int) error{
			func(k int) error {
				_, err := bareSearch(ctx, bare, specs[k%len(specs)])
				return err
			},
			func(k int) error {
				return bench.GetRaw(ctx, c, urls[k%len(urls)], w.Sam.Token, &buf)
			},
		}
		dst := []*[]time.Duration{&base, &fig}
		for j, op := range ops {
			l, k, err := loopAtLeast(ctx, d/searchRounds, len(queries)/searchRounds, next[j], op)
			if err != nil {
				return fmt.Errorf("search: %w", err)
			}
			*dst[j], next[j] = append(*dst[j], l...), k
		}
	}
	res.Requests, res.BaselineReads = len(fig), len(base)
	res.P50Ms, res.P99Ms = bench.Ms(bench.Percentile(fig, 50)), bench.Ms(bench.Percentile(fig, 99))
	res.BaselineP50Ms, res.BaselineP99Ms = bench.Ms(bench.Percentile(base, 50)), bench.Ms(bench.Percentile(base, 99))
	res.P50Ratio, res.P99Ratio = bench.Round2(res.P50Ms/res.BaselineP50Ms), bench.Round2(res.P99Ms/res.BaselineP99Ms)
	return nil
}

// loopAtLeast is loopFor that also makes at least n calls, so that a slow search still gives
// every round its share of the queries (searchQueries / searchRounds) and the percentiles
// their samples.
func loopAtLeast(ctx context.Context, d time.Duration, n, k int, op func(int) error) ([]time.Duration, int, error) {
	var out []time.Duration
	deadline := time.Now().Add(d)
	for len(out) < n || time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return nil, k, err
		}
		began := time.Now()
		if err := op(k); err != nil {
			return nil, k, err
		}
		out = append(out, time.Since(began))
		k++
	}
	return out, k, nil
}

// searchHTTP runs one search over HTTP and returns the ids of its hits.
func searchHTTP(ctx context.Context, c *http.Client, u, token string, buf *bytes.Buffer) ([]uuid.UUID, error) {
	if err := bench.GetRaw(ctx, c, u, token, buf); err != nil {
		return nil, err
	}
	var page struct {
		Items []struct {
			Message struct {
				ID uuid.UUID `json:"id"`
			} `json:"message"`
		} `json:"items"`
	}
	if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
		return nil, fmt.Errorf("search: decode: %w", err)
	}
	out := make([]uuid.UUID, len(page.Items))
	for i, it := range page.Items {
		out[i] = it.Message.ID
	}
	return out, nil
}

// bareSearch runs the store's statement with spec's arguments and scans every row into plain
// values; it returns the message ids.
func bareSearch(ctx context.Context, pool *pgxpool.Pool, spec chatapp.SearchSpec) ([]uuid.UUID, error) {
	rows, err := pool.Query(ctx, chatpg.SearchMessagesSQL(), chatpg.SearchArgs(spec)...)
	if err != nil {
		return nil, fmt.Errorf("bare search: %w", err)
	}
	defer rows.Close()
	var (
		out                       []uuid.UUID
		id, thread, channel, auth uuid.UUID
		space                     pgtype.UUID
		seq                       int64
		content, headline         string
		created                   time.Time
		edited, redacted          pgtype.Timestamptz
		key                       pgtype.Text
		invocation                pgtype.UUID
		mentions                  []uuid.UUID
		rank                      float32
	)
	for rows.Next() {
		if err := rows.Scan(&id, &thread, &channel, &space, &seq, &auth, &content, &created, &edited, &redacted, &key, &invocation, &mentions, &rank, &headline); err != nil {
			return nil, fmt.Errorf("bare search: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bare search: %w", err)
	}
	return out, nil
}

// Markdown renders the search section of docs/benchmarks.md through w.
func (r SearchResult) Markdown(w func(format string, args ...any)) {
	w("\n## Message search\n\n")
	w("A third App on a scratch database of the same cluster serves a world the benchmark builds\n")
	w("(in %.1f s, of which %.1f s bulk SQL): the owner Alex (through the App's Bootstrap) and Sam,\n", r.WorldSeconds, r.SeedSeconds)
	w("%s and %s, and Sam's member grants on every tenth channel (%d), through the use\n", bench.Count(max(1, r.Channels/syncbench.ChannelsPerSpace), "space"), bench.Count(r.Channels, "channel"), r.VisibleChannels)
	w("cases over HTTP; then in bulk SQL %d threads and %s messages of 6 to 15 words each, drawn\n", r.Threads, bench.Thousands(int64(r.Messages)))
	w("log-uniformly (a Zipf-like spread) from a vocabulary of %d generated words, in one\n", searchVocabulary)
	w("INSERT ... SELECT from generate_series with the GIN index of search dropped and built again\n")
	w("after; then VACUUM ANALYZE.\n\n")
	w("Figure: `searchMessages` as Sam over HTTP (`GET /api/v1/search/messages?q=`, the default\n")
	w("page of %d, on a keep-alive connection, the response read to its end): authentication,\n", r.PageSize)
	w("`thread.read` on the instance, the query check, the prefiltered ranked query with the\n")
	w("excerpts and mentions of the page, `authorize` per hit, the response. Baseline: the bare\n")
	w("SQL of the same answer, the statement the store runs with the arguments Sam's Scope gives it\n")
	w("(his granted channels), every row scanned into plain values on a plain pgx pool. The %d\n", r.Queries)
	w("queries are words of vocabulary ranks %d to %d and, every fifth, a common word with a rarer\n", searchRankFrom, searchRankTo)
	w("one; each matches %.0f of Sam's messages on average (ranked to give %.1f hits per page). A\n", r.MatchesPerQuery, r.HitsPerPage)
	w("first pass checks that both give the same messages in the same order; then %d rounds, each\n", r.Rounds)
	w("giving the baseline and the figure a quarter of the case's time and at least a quarter of the\n")
	w("queries. Lower is better; the ratios are figure / baseline.\n\n")
	w("| reader | visible channels | matches/query | requests | p50 | p99 | bare SQL p50 | bare SQL p99 | ratio p50 / p99 |\n")
	w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %s | %d | %.0f | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f / %.2f |\n", syncbench.ReaderTenth, r.VisibleChannels,
		r.MatchesPerQuery, r.Requests, r.P50Ms, r.P99Ms, r.BaselineP50Ms, r.BaselineP99Ms, r.P50Ratio, r.P99Ratio)
}

// targets are the search target: at most 1.5 times the bare SQL at p50.
func (r SearchResult) targets() []bench.Target {
	if r.Requests == 0 {
		return nil
	}
	return []bench.Target{{
		Name:  fmt.Sprintf("searchMessages over HTTP, %s messages, %s: p50 / bare SQL p50", bench.Thousands(int64(r.Messages)), syncbench.ReaderTenth),
		Value: r.P50Ratio, Limit: "<= 1.5", Pass: r.P50Ratio <= 1.5,
	}}
}
