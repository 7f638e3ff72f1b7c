package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
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
	if o.cases[caseAppend] {
		if rep.Append, err = appendCases(ctx, app, bare, o, progress); err != nil {
			return nil, err
		}
	}
	if o.cases[caseTail] {
		progress("tail latency at %d events/s", o.rate)
		if rep.Tail, err = latencyCase(ctx, app, url, o); err != nil {
			return nil, err
		}
	}
	if o.cases[casePost] {
		if rep.Post, err = postMessageCase(ctx, app, bare, o, progress); err != nil {
			return nil, err
		}
	}
	if o.cases[caseAuthz] {
		progress("authorization: authorize with a warm Scope, Scope build of %d channel grants", authzChannels)
		if rep.Authz, err = authzCase(ctx, app, bare, o.authzTime, logger); err != nil {
			return nil, err
		}
	}
	if o.cases[caseGateway] {
		if rep.Gateway, err = gatewayCases(ctx, o, url, logger, progress); err != nil {
			return nil, err
		}
	}
	if o.cases[caseInvoke] {
		if rep.Invoke, err = invokeCase(ctx, o, url, logger, progress); err != nil {
			return nil, err
		}
	}
	if o.cases[caseSync] || o.cases[caseSDK] || o.cases[caseSidebar] || o.cases[caseConsumer] {
		if err := syncCases(ctx, o, syncURL, logger, progress, rep); err != nil {
			return nil, err
		}
	}
	if o.cases[caseThreads] {
		if rep.Threads, err = threadListCase(ctx, app, bare, o, progress); err != nil {
			return nil, err
		}
	}
	if o.cases[caseSearch] {
		if rep.Search, err = searchCase(ctx, o, url, logger, progress); err != nil {
			return nil, err
		}
	}
	// The ingest case runs last: its Demo world bootstraps the owner when there is none.
	if o.cases[caseIngest] {
		if rep.Ingest, err = ingestCase(ctx, app, bare, o, progress); err != nil {
			return nil, err
		}
	}
	rep.evaluate()
	return rep, nil
}

// machineFacts records what the figures depend on.
func machineFacts(ctx context.Context, app *wire.App) (machine, error) {
	m := machine{
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		Date:       time.Now().UTC().Format(time.DateOnly),
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

// connect opens a plain connection (no pool, no hooks) for the bare round trip.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return conn, nil
}
