package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/config"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/wire"
)

// maxConns is the pool size of the wired App and of the baseline's pool: room for the
// largest writer count, the tail and the latency probes, and the postMessage clients.
const maxConns = 40

// measure wires an App on the database at url (migrating it, creating the instance and its
// partitions), runs every case and returns the report.
// The sync cases (catch-up and snapshot) and the client cases run on their own App over the
// database at syncURL.
func measure(ctx context.Context, o options, url, syncURL string, logger *slog.Logger, progress func(string, ...any)) (*report, error) {
	cfg, err := config.Load("", []string{
		config.DatabaseURL.EnvName() + "=" + url,
		config.DatabaseMaxConns.EnvName() + "=" + fmt.Sprint(maxConns),
	})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	// The api role only: the postMessage case serves HTTP with this App, and the tail latency
	// case runs the App's log tail itself, which the gateway role would start a second time.
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true, Roles: []string{wire.RoleAPI}})
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	defer app.Close()
	bare, err := wire.NewPool(ctx, url, maxConns)
	if err != nil {
		return nil, err
	}
	defer bare.Close()

	rep := &report{
		Settings: settings{
			Duration:       o.duration.String(),
			Warmup:         o.warmup.String(),
			Rate:           o.rate,
			LatencyWriters: o.latWriter,
			// Read like wire reads it; wire.New already rejected an invalid value.
			AppendConcurrency: syncpg.AppendConfigFrom(cfg).Concurrency,
		},
	}
	if rep.Machine, err = machineFacts(ctx, app); err != nil {
		return nil, err
	}
	for _, g := range []struct {
		name string
		on   bool
		run  func() error
	}{
		{caseAppend, o.cases[caseAppend], func() (err error) { rep.Append, err = appendCases(ctx, app, bare, o, progress); return err }},
		{caseTail, o.cases[caseTail], func() (err error) {
			progress("tail latency at %d events/s", o.rate)
			rep.Tail, err = latencyCase(ctx, app, url, o)
			return err
		}},
		{casePost, o.cases[casePost], func() (err error) { rep.Post, err = postMessageCase(ctx, app, bare, o, progress); return err }},
		{caseAuthz, o.cases[caseAuthz], func() (err error) {
			progress("authorization: authorize with a warm Scope, Scope build of %d channel grants", authzChannels)
			rep.Authz, err = authzCase(ctx, app, bare, o.authzTime, logger)
			return err
		}},
		{caseGateway, o.cases[caseGateway], func() (err error) { rep.Gateway, err = gatewayCases(ctx, o, url, logger, progress); return err }},
		{caseInvoke, o.cases[caseInvoke], func() (err error) { rep.Invoke, err = invokeCase(ctx, o, url, logger, progress); return err }},
		{caseSync, o.cases[caseSync] || o.cases[caseSDK] || o.cases[caseSidebar] || o.cases[caseConsumer], func() error {
			return syncCases(ctx, o, syncURL, logger, progress, rep)
		}},
		{caseThreads, o.cases[caseThreads], func() (err error) { rep.Threads, err = threadListCase(ctx, app, bare, o, progress); return err }},
		{caseSearch, o.cases[caseSearch], func() (err error) { rep.Search, err = searchCase(ctx, o, url, logger, progress); return err }},
		// The ingest case runs last: its Demo world bootstraps the owner when there is none.
		{caseIngest, o.cases[caseIngest], func() (err error) { rep.Ingest, err = ingestCase(ctx, app, bare, o, progress); return err }},
	} {
		if !g.on {
			continue
		}
		if err := profiled(g.name, g.run); err != nil {
			return nil, err
		}
	}
	rep.evaluate()
	return rep, nil
}

// profileEnv, when set to a directory, has each case group write a CPU profile of the
// benchmark's process (the server's side of every case served in it, world building included)
// there as <group>.pprof, to find where a figure's time goes.
const profileEnv = "BOTHYBENCH_PROFILE"

// profiled runs one case group, under a CPU profile when profileEnv names a directory.
func profiled(group string, run func() error) error {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return run()
	}
	f, err := os.Create(filepath.Join(dir, group+".pprof")) //nolint:gosec // G304: a directory the user chose.
	if err != nil {
		return fmt.Errorf("%s: profile: %w", group, err)
	}
	defer func() { _ = f.Close() }()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("%s: profile: %w", group, err)
	}
	defer pprof.StopCPUProfile()
	return run()
}

// machineFacts records what the figures depend on.
func machineFacts(ctx context.Context, app *wire.App) (machine, error) {
	m := machine{
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		Date:       time.Now().UTC().Format(time.DateOnly),
		Kernel:     readKernelFacts(),
	}
	pool := app.Pool()
	for name, dst := range map[string]*string{
		"server_version":     &m.PostgresVersion,
		"fsync":              &m.Fsync,
		"synchronous_commit": &m.SynchronousCommit,
		"wal_sync_method":    &m.WalSyncMethod,
	} {
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(dst); err != nil {
			return m, fmt.Errorf("read setting %s: %w", name, err)
		}
	}
	return m, nil
}

// rotation is the order in which a case runs its n sides (baseline, figure, and any reference,
// by index) in round: the rotation that starts with side round mod n. Over a multiple of n
// rounds every side runs first, second and so on equally often, so a drift of the machine's
// speed at some point of a round does not land on the same side every time (DECISIONS).
func rotation(round, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (round + k) % n
	}
	return order
}

// connect opens a plain connection (no pool, no hooks) for the bare round trip.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return conn, nil
}
