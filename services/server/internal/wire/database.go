package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pglocal"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// Database returns the URL of the database the process uses and a function
// that releases it. With database.url set it is that URL and stop does
// nothing. With database.url empty it starts the embedded default: a
// PostgreSQL cluster from the machine's binaries under embedded.dir (data in
// pgdata/, the superuser's password in password, the server log in
// postgres.log), created on first use and reused afterwards, holding the
// database bothy; stop shuts that cluster down. When another live bothy
// process already runs the cluster (bothy admin or bothy migrate beside
// bothy serve), it attaches to that cluster instead, and stop leaves it
// running for its owner. Both keys are always read, so the configuration
// check sees them whichever branch runs.
//
// The error wraps pglocal.ErrNotInstalled when PostgreSQL is missing (its
// text says how to install it).
func Database(ctx context.Context, cfg *config.Config, logger *slog.Logger) (url string, stop func(context.Context) error, err error) {
	return database(ctx, cfg, logger, false)
}

// database is Database and, with exclusive, DatabaseExclusive: the keys read and checked
// alike, then database.url or the embedded default, started shared or exclusively.
func database(ctx context.Context, cfg *config.Config, logger *slog.Logger, exclusive bool) (url string, stop func(context.Context) error, err error) {
	url = cfg.String(config.DatabaseURL)
	dir := cfg.String(config.EmbeddedDir)
	timeouts := pglocal.TimeoutsFrom(cfg)
	if err := cfg.Err(); err != nil {
		return "", nil, fmt.Errorf("configuration: %w", err)
	}
	if err := timeouts.Validate(); err != nil {
		return "", nil, fmt.Errorf("configuration: %w", err)
	}
	if url != "" {
		return url, func(context.Context) error { return nil }, nil
	}
	if dir == "" {
		return "", nil, errors.New("embedded default: embedded.dir is empty and database.url is not set")
	}
	dataDir, err := filepath.Abs(filepath.Join(dir, "pgdata"))
	if err != nil {
		return "", nil, fmt.Errorf("embedded default: %w", err)
	}
	logger.InfoContext(ctx, "starting the embedded default database", "dir", filepath.Dir(dataDir), "exclusive", exclusive)
	c, err := pglocal.Start(ctx, pglocal.Options{
		Dir:       dataDir,
		Fsync:     true,
		Logger:    logger,
		Database:  pglocal.DefaultDatabase,
		Exclusive: exclusive,
		Timeouts:  timeouts,
	})
	if exclusive && errors.Is(err, pglocal.ErrInUse) {
		return "", nil, fmt.Errorf("embedded default %s: %w: %w", filepath.Dir(dataDir), ErrDatabaseInUse, err)
	}
	if err != nil {
		return "", nil, fmt.Errorf("embedded default: %w", err)
	}
	logger.InfoContext(ctx, "embedded default database ready", "port", c.Port())
	return c.URL(pglocal.DefaultDatabase), c.Stop, nil
}

// UsesEmbedded reports whether cfg selects the embedded default (database.url
// empty). bothy serve migrates the embedded default on start, because no
// operator runs bothy migrate against it.
func UsesEmbedded(cfg *config.Config) bool {
	return cfg.String(config.DatabaseURL) == ""
}

// Migrate applies Migrations to the database at url and returns how many
// migration files it applied (0 when the schema was current). Then it
// creates the instance when it is missing (named instance.name) and runs one
// partition upkeep of the event log, so a database bothy migrate prepared is
// ready to serve. Concurrent migrators serialize on an advisory lock inside
// migrate.Apply; the setup steps are idempotent. It fails on a bad
// configuration value before touching the database.
func Migrate(ctx context.Context, cfg *config.Config, url string, logger *slog.Logger) (int, error) {
	maxConns := cfg.Int(config.DatabaseMaxConns)
	logCfg := readLogConfig(cfg)
	syncCfg := syncapp.ConfigFrom(cfg)
	if err := cfg.Err(); err != nil {
		return 0, fmt.Errorf("configuration: %w", err)
	}
	if err := errors.Join(logCfg.validate(), syncCfg.Validate()); err != nil {
		return 0, fmt.Errorf("configuration: %w", err)
	}
	pool, err := NewPool(ctx, url, maxConns)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	n, err := migrate.Apply(ctx, pool, Migrations())
	if err != nil {
		return n, fmt.Errorf("apply migrations: %w", err)
	}
	log, err := newEventLog(pool, tx.NewRunner(pool), clock.System(), logger, logCfg, syncCfg)
	if err != nil {
		return n, err
	}
	if err := log.setUp(ctx, logCfg.instanceName, logger); err != nil {
		return n, err
	}
	return n, nil
}
