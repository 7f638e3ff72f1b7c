package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/sync/adapters/pglisten"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// logConfig is every key of the event log's adapters the process reads (the log's
// partitions and appender, the tail's LISTEN connection), the name a new instance row gets,
// and the instance module's idempotency keys' http.idempotency_ttl and
// http.idempotency_claim_attempts. The sync use cases' keys (the tail's pace, maintenance) are
// in syncapp.Config.
type logConfig struct {
	instanceName   string
	idempotencyTTL time.Duration
	// claimAttempts is http.idempotency_claim_attempts.
	claimAttempts int
	partitions    syncpg.PartitionConfig
	append        syncpg.AppendConfig
	// listen is sync.listen_check_interval and sync.listen_close_timeout.
	listen pglisten.Config
}

// readLogConfig reads the keys; bad values are collected in cfg.Err.
func readLogConfig(cfg *config.Config) logConfig {
	return logConfig{
		instanceName:   cfg.String(KeyInstanceName),
		idempotencyTTL: cfg.Duration(config.HTTPIdempotencyTTL),
		claimAttempts:  cfg.Int(config.HTTPIdempotencyClaimAttempts),
		partitions:     syncpg.PartitionConfigFrom(cfg),
		append:         syncpg.AppendConfigFrom(cfg),
		listen:         pglisten.ConfigFrom(cfg),
	}
}

// validate rejects values the keys' types allow but the adapters cannot work with, naming
// the key.
func (c logConfig) validate() error {
	switch {
	case c.instanceName == "":
		return fmt.Errorf("%s is empty", KeyInstanceName.Name)
	case c.idempotencyTTL <= 0:
		return fmt.Errorf("%s is %v, want more than 0", config.HTTPIdempotencyTTL.Name, c.idempotencyTTL)
	case c.claimAttempts < 1:
		return fmt.Errorf("%s is %d, want at least 1", config.HTTPIdempotencyClaimAttempts.Name, c.claimAttempts)
	}
	return errors.Join(c.partitions.Validate(), c.append.Validate(), c.listen.Validate())
}

// eventLog is the instance and sync modules as one process uses them.
type eventLog struct {
	instance            *instancepg.Store
	idempotency         *instancepg.IdempotencyKeys
	idempotencyTTL      time.Duration
	claimAttempts       int
	appender            *syncpg.Appender
	tail                *syncapp.Tail
	maintenance         *syncapp.Maintenance
	maintenanceInterval time.Duration
}

// newEventLog builds the instance store, the appender bound to its counters
// (with its admission limit), the log tail (reader, head and a LISTEN
// connection of its own, built from the pool's connection settings) and the
// maintenance use case, whose runs also purge expired idempotency keys.
func newEventLog(pool *pgxpool.Pool, runner *tx.Runner, clk clock.Clock, logger *slog.Logger, c logConfig, sc syncapp.Config) (eventLog, error) {
	store := instancepg.New(runner)
	partitions, err := syncpg.NewPartitions(pool, c.partitions)
	if err != nil {
		return eventLog{}, fmt.Errorf("configuration: %w", err)
	}
	connConfig := pool.Config().ConnConfig
	listener, err := pglisten.New(func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, connConfig.Copy())
	}, c.listen)
	if err != nil {
		return eventLog{}, fmt.Errorf("configuration: %w", err)
	}
	tailConfig := sc.Tail
	tailConfig.Logger = logger
	tail, err := syncapp.NewTail(syncpg.NewReader(runner), store, listener, tailConfig)
	if err != nil {
		return eventLog{}, fmt.Errorf("configuration: %w", err)
	}
	appender, err := syncpg.NewAppender(runner, store, c.append)
	if err != nil {
		return eventLog{}, fmt.Errorf("configuration: %w", err)
	}
	keys := instancepg.NewIdempotencyKeys(runner)
	upkeep := upkeepAndPurge{partitions: partitions, keys: keys, ttl: c.idempotencyTTL, logger: logger}
	return eventLog{
		instance:            store,
		idempotency:         keys,
		idempotencyTTL:      c.idempotencyTTL,
		claimAttempts:       c.claimAttempts,
		appender:            appender,
		tail:                tail,
		maintenance:         syncapp.NewMaintenance(upkeep, clk, logger),
		maintenanceInterval: sc.MaintenanceInterval,
	}, nil
}

// setUp brings a freshly migrated database to where a process can serve:
// the instance row exists (named name when it is created now) and the log
// has its partitions for now and ahead. Both steps are idempotent.
func (l eventLog) setUp(ctx context.Context, name string, logger *slog.Logger) error {
	info, err := l.instance.Ensure(ctx, name)
	if err != nil {
		return fmt.Errorf("set up the instance: %w", err)
	}
	logger.InfoContext(ctx, "instance ready", "instance_id", info.ID.String(), "name", info.Name, "sync_epoch", info.SyncEpoch.String())
	rep, err := l.maintenance.Maintain(ctx)
	if err != nil {
		return fmt.Errorf("set up the event log: %w", err)
	}
	logger.InfoContext(ctx, "event log partitions ready", "created", len(rep.Created), "dropped", len(rep.Dropped), "horizon_seq", rep.HorizonSeq)
	return nil
}
