package authzbench

import (
	"cmp"
	"context"
	_ "embed" // the baselines' SQL
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/authz"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/authz/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/wire"
)

var (
	//go:embed queries/bare_grants_of_principal.sql
	bareGrantsOfPrincipal string
	//go:embed queries/seed_channel_grants.sql
	seedChannelGrants string
)

// The authorization world: each of two principals holds a member grant on every one of
// authzChannels channels, spread over authzSpaces spaces.
const (
	authzChannels = 1000
	authzSpaces   = 50
	// authzRounds is how often each figure and its baseline run, in turn.
	authzRounds = 3
)

// AuthzResult is the authorization cases: each figure beside its baseline, both measured with
// testing.Benchmark in the same run.
type AuthzResult struct {
	ChannelGrants int        `json:"channel_grants"`
	Spaces        int        `json:"spaces"`
	BenchTime     string     `json:"benchtime"`
	Rounds        int        `json:"rounds"`
	Cases         []authzRow `json:"cases"`
}

// authzRow is one case.
type authzRow struct {
	Name             string  `json:"name"`
	Figure           string  `json:"figure"`
	NsPerOp          int64   `json:"ns_per_op"`
	AllocsPerOp      int64   `json:"allocs_per_op"`
	BytesPerOp       int64   `json:"bytes_per_op"`
	Baseline         string  `json:"baseline"`
	BaselineNsPerOp  int64   `json:"baseline_ns_per_op"`
	BaselineAllocsOp int64   `json:"baseline_allocs_per_op"`
	BaselineBytesOp  int64   `json:"baseline_bytes_per_op"`
	Ratio            float64 `json:"ratio"`
}

// channelDirectory is the bench's authz.ChannelDirectory: an in-memory map of the world's
// channels to their spaces. The chat module that will implement the port does not exist yet;
// its SpacesOfChannels will be one more query in a Scope build.
type channelDirectory map[uuid.UUID]uuid.UUID

// SpacesOfChannels implements authzapp.ChannelDirectory.
func (d channelDirectory) SpacesOfChannels(_ context.Context, channelIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := make(map[uuid.UUID]uuid.UUID, len(channelIDs))
	for _, c := range channelIDs {
		if s, ok := d[c]; ok {
			out[c] = s
		}
	}
	return out, nil
}

// ChannelExists implements authzapp.ChannelDirectory.
func (d channelDirectory) ChannelExists(_ context.Context, id uuid.UUID) (bool, error) {
	_, ok := d[id]
	return ok, nil
}

// DirectParticipant implements authzapp.ChannelDirectory: the bench's world has no direct
// messages.
func (d channelDirectory) DirectParticipant(context.Context, uuid.UUID, uuid.UUID) (direct, participant bool, err error) {
	return false, false, nil
}

// SpaceExists implements authzapp.ChannelDirectory.
func (d channelDirectory) SpaceExists(_ context.Context, id uuid.UUID) (bool, error) {
	for _, s := range d {
		if s == id {
			return true, nil
		}
	}
	return false, nil
}

// setBenchTime sets how long testing.Benchmark runs each function (its -test.benchtime),
// registering the testing flags first outside a test binary.
func setBenchTime(d time.Duration) error {
	if flag.Lookup("test.benchtime") == nil {
		testing.Init()
	}
	if err := flag.Set("test.benchtime", d.String()); err != nil {
		return fmt.Errorf("benchtime: %w", err)
	}
	return nil
}

// authzCase seeds the world through the bare pool and measures, with testing.Benchmark:
//   - authorize per request (Authorizer.Authorize of channel.read with the actor's Scope
//     cached: the permission_version read, the cache hit, the decision) against the bare
//     permission_version read;
//   - authorize per row (a Decider bound to the cached Scope, as catch-up decides each row)
//     against the policy alone (domain.Decide on the same Scope and resource);
//   - a Scope build for a principal with 1,000 channel grants (cache always missed) against
//     the bare grant query returning the same 1,000 rows.
func authzCase(ctx context.Context, app *wire.App, bare *pgxpool.Pool, benchTime time.Duration, logger *slog.Logger) (AuthzResult, error) {
	if err := setBenchTime(benchTime); err != nil {
		return AuthzResult{}, err
	}
	dir := channelDirectory{}
	spaces := make([]uuid.UUID, authzSpaces)
	for i := range spaces {
		spaces[i] = ids.New()
	}
	channels := make([]uuid.UUID, authzChannels)
	for i := range channels {
		channels[i] = ids.New()
		dir[channels[i]] = spaces[i%authzSpaces]
	}
	sam, robin, alex := ids.New(), ids.New(), ids.New()
	for _, p := range []uuid.UUID{sam, robin} {
		grantIDs := make([]uuid.UUID, authzChannels)
		for i := range grantIDs {
			grantIDs[i] = ids.New()
		}
		if _, err := bare.Exec(ctx, seedChannelGrants, p, channels, alex, grantIDs); err != nil {
			return AuthzResult{}, fmt.Errorf("seed grants: %w", err)
		}
	}

	newAuthorizer := func(cacheSize int) (*authzapp.Authorizer, error) {
		return authzapp.NewAuthorizer(authzapp.AuthorizerDeps{
			Grants:     authzpg.New(app.Tx()),
			Versions:   app.Versions(),
			Directory:  dir,
			CacheSize:  cacheSize,
			Logger:     logger,
			Registerer: prometheus.NewRegistry(),
		})
	}
	warm, err := newAuthorizer(2)
	if err != nil {
		return AuthzResult{}, err
	}
	// A cache of one entry and two principals used in turn: every Scope call builds.
	cold, err := newAuthorizer(1)
	if err != nil {
		return AuthzResult{}, err
	}

	who := actor.Actor{PrincipalID: sam, Kind: actor.KindPerson}
	actx := actor.With(ctx, who)
	res := func(i int) authorize.Resource {
		return authorize.Resource{Kind: kernel.ResourceChannel, ID: channels[i%authzChannels]}
	}
	if err := warm.Authorize(actx, kernel.ActionChannelRead, res(0)); err != nil {
		return AuthzResult{}, fmt.Errorf("warm the scope: %w", err)
	}
	decider, err := warm.ForActor(actx)
	if err != nil {
		return AuthzResult{}, err
	}
	scope := decider.Scope()
	if n := len(scope.VisibleChannelIDs()); n != authzChannels {
		return AuthzResult{}, fmt.Errorf("scope sees %d channels, want %d", n, authzChannels)
	}

	var failure error
	fail := func(err error) {
		if err != nil && failure == nil {
			failure = err
		}
	}
	run := func(fn func(i int) error) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if err := fn(i); err != nil {
					fail(err)
					b.FailNow()
				}
			}
		})
	}
	// Figure and baseline alternate over authzRounds rounds and each keeps its median run, so
	// drift on the machine (the cases before this one leave work behind) hits both alike.
	pair := func(name, figure, baseline string, f, base func(i int) error) authzRow {
		var figures, baselines []testing.BenchmarkResult
		for range authzRounds {
			figures = append(figures, run(f))
			baselines = append(baselines, run(base))
		}
		fr, br := median(figures), median(baselines)
		return authzRow{
			Name: name, Figure: figure, Baseline: baseline,
			NsPerOp: fr.NsPerOp(), AllocsPerOp: fr.AllocsPerOp(), BytesPerOp: fr.AllocedBytesPerOp(),
			BaselineNsPerOp: br.NsPerOp(), BaselineAllocsOp: br.AllocsPerOp(), BaselineBytesOp: br.AllocedBytesPerOp(),
			Ratio: ratio(fr.NsPerOp(), br.NsPerOp()),
		}
	}

	out := AuthzResult{ChannelGrants: authzChannels, Spaces: authzSpaces, BenchTime: benchTime.String(), Rounds: authzRounds}
	out.Cases = append(out.Cases, pair(
		"authorize per request, warm Scope",
		"Authorizer.Authorize(channel.read) with the Scope cached",
		"the bare permission_version read",
		func(i int) error { return warm.Authorize(actx, kernel.ActionChannelRead, res(i)) },
		func(int) error {
			var v int64
			return bare.QueryRow(ctx, bench.BarePermissionVersion, "permission_version").Scan(&v)
		},
	))
	out.Cases = append(out.Cases, pair(
		"authorize per row, warm Scope",
		"Decider.Authorize(channel.read) on the cached Scope",
		"domain.Decide alone (the policy)",
		func(i int) error { return decider.Authorize(actx, kernel.ActionChannelRead, res(i)) },
		func(i int) error { return domain.Decide(who, scope, kernel.ActionChannelRead, res(i)).Err() },
	))
	principals := []uuid.UUID{sam, robin}
	out.Cases = append(out.Cases, pair(
		fmt.Sprintf("Scope build, %d channel grants", authzChannels),
		"Authorizer.Scope with the cache missed",
		"the bare grant query (same rows, scanned)",
		func(i int) error {
			s, err := cold.Scope(ctx, principals[i%2])
			if err == nil && len(s.VisibleChannelIDs()) != authzChannels {
				err = errors.New("scope build lost grants")
			}
			return err
		},
		func(i int) error { return bareGrants(ctx, bare, principals[i%2]) },
	))
	if failure != nil {
		return AuthzResult{}, fmt.Errorf("authz case: %w", failure)
	}
	return out, nil
}

// median returns the run with the median ns/op.
func median(rs []testing.BenchmarkResult) testing.BenchmarkResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b testing.BenchmarkResult) int { return cmp.Compare(a.NsPerOp(), b.NsPerOp()) })
	return s[len(s)/2]
}

// bareGrants runs the bare grant query and scans every row into plain values.
func bareGrants(ctx context.Context, pool *pgxpool.Pool, principal uuid.UUID) error {
	rows, err := pool.Query(ctx, bareGrantsOfPrincipal, principal)
	if err != nil {
		return fmt.Errorf("bare grants: %w", err)
	}
	defer rows.Close()
	var (
		g authz.Grant
		n int
	)
	for rows.Next() {
		var kind, role string
		if err := rows.Scan(&g.ID, &g.PrincipalID, &kind, &g.ResourceID, &role, &g.CreatedAt, &g.CreatedBy); err != nil {
			return fmt.Errorf("bare grants: %w", err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("bare grants: %w", err)
	}
	if n != authzChannels {
		return fmt.Errorf("bare grants: %d rows, want %d", n, authzChannels)
	}
	return nil
}

// ratio is figure / baseline, rounded to two places; 0 without a baseline.
func ratio(figure, baseline int64) float64 {
	if baseline <= 0 {
		return 0
	}
	return math.Round(float64(figure)/float64(baseline)*100) / 100
}

// Markdown renders the authorization section of docs/benchmarks.md through w.
func (a AuthzResult) Markdown(w func(format string, args ...any)) {
	w("\n## Authorization\n\n")
	w("Each figure and its baseline run under `testing.Benchmark` (%s each), in turn, %d times;\n", a.BenchTime, a.Rounds)
	w("each keeps its median run, in the same process against the same database. The world: a\n")
	w("person with a member grant on each of %d channels in %d spaces (a second such person makes\n", a.ChannelGrants, a.Spaces)
	w("every Scope build miss the cache). The channel directory is an in-memory map: the chat\n")
	w("module that will implement it does not exist yet, and its query will add one round trip to\n")
	w("a Scope build. Lower is better; the ratio is figure / baseline in ns/op.\n\n")
	w("| case | figure | ns/op | allocs/op | B/op | baseline | ns/op | allocs/op | B/op | ratio |\n")
	w("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
	for _, c := range a.Cases {
		w("| %s | %s | %d | %d | %d | %s | %d | %d | %d | %.2f |\n", c.Name, c.Figure, c.NsPerOp, c.AllocsPerOp, c.BytesPerOp,
			c.Baseline, c.BaselineNsPerOp, c.BaselineAllocsOp, c.BaselineBytesOp, c.Ratio)
	}
	w("\nPer request, authorize costs one round trip (the permission_version read that proves the\n")
	w("cached Scope current) and the decision; per row (catch-up, list filtering) a Decider decides\n")
	w("on the Scope it holds without any I/O.\n")
}

// Key is the authz member of benchmarks.json.
func (AuthzResult) Key() string { return "authz" }

// Targets is empty: the authorization cases have no target.
func (AuthzResult) Targets() []bench.Target { return nil }

// Authz is the authorization case (authzCase).
type Authz struct{}

// Name is authz.
func (Authz) Name() string { return "authz" }

// World is none: the case runs on the main App.
func (Authz) World() string { return "" }

// Run measures authorization with testing.Benchmark against its bare baselines.
func (Authz) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	env.Progress("authorization: authorize with a warm Scope, Scope build of %d channel grants", authzChannels)
	r, err := authzCase(ctx, env.App, env.Bare, env.Options.AuthzTime, env.Logger)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}
