package wire

import (
	"context"
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

// eventLogConfig is every key of the instance and sync modules the process
// reads, and http.idempotency_ttl, the age at which the instance module's
// idempotency keys expire.
type eventLogConfig struct {
	instanceName   string
	idempotencyTTL time.Duration
	// claimAttempts is http.idempotency_claim_attempts.
	claimAttempts       int
	partitions          syncpg.PartitionConfig
	append              syncpg.AppendConfig
	tailPollInterval    time.Duration
	tailBatchSize       int
	maintenanceInterval time.Duration
	// tailRetryBase and tailRetryCap are sync.tail_retry_base and sync.tail_retry_cap.
	tailRetryBase, tailRetryCap time.Duration
	// listen is sync.listen_check_interval and sync.listen_close_timeout.
	listen pglisten.Config
}

// readEventLogConfig reads the keys; bad values are collected in cfg.Err.
func readEventLogConfig(cfg *config.Config) eventLogConfig {
	return eventLogConfig{
		instanceName:        cfg.String(KeyInstanceName),
		idempotencyTTL:      cfg.Duration(config.HTTPIdempotencyTTL),
		claimAttempts:       cfg.Int(config.HTTPIdempotencyClaimAttempts),
		partitions:          syncpg.PartitionConfigFrom(cfg),
		append:              syncpg.AppendConfigFrom(cfg),
		tailPollInterval:    cfg.Duration(syncapp.KeyTailPollInterval),
		tailBatchSize:       cfg.Int(syncapp.KeyTailBatchSize),
		maintenanceInterval: cfg.Duration(syncapp.KeyMaintenanceInterval),

		tailRetryBase: cfg.Duration(syncapp.KeyTailRetryBase),
		tailRetryCap:  cfg.Duration(syncapp.KeyTailRetryCap),
		listen:        pglisten.ConfigFrom(cfg),
	}
}

// validate rejects values the keys' types allow but the modules cannot work
// with, naming the key.
func (c eventLogConfig) validate() error {
	switch {
	case c.instanceName == "":
		return fmt.Errorf("configuration: %s is empty", KeyInstanceName.Name)
	case c.idempotencyTTL <= 0:
		return fmt.Errorf("configuration: %s is %v, want more than 0", config.HTTPIdempotencyTTL.Name, c.idempotencyTTL)
	case c.claimAttempts < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", config.HTTPIdempotencyClaimAttempts.Name, c.claimAttempts)
	case c.tailPollInterval <= 0:
		return fmt.Errorf("configuration: %s is %v, want more than 0", syncapp.KeyTailPollInterval.Name, c.tailPollInterval)
	case c.tailRetryBase <= 0:
		return fmt.Errorf("configuration: %s is %v, want more than 0", syncapp.KeyTailRetryBase.Name, c.tailRetryBase)
	case c.tailRetryCap < c.tailRetryBase:
		return fmt.Errorf("configuration: %s is %v, want at least %s (%v)", syncapp.KeyTailRetryCap.Name, c.tailRetryCap, syncapp.KeyTailRetryBase.Name, c.tailRetryBase)
	case c.tailBatchSize < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", syncapp.KeyTailBatchSize.Name, c.tailBatchSize)
	case c.maintenanceInterval <= 0:
		return fmt.Errorf("configuration: %s is %v, want more than 0", syncapp.KeyMaintenanceInterval.Name, c.maintenanceInterval)
	}
	if err := c.partitions.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := c.append.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if err := c.listen.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
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
func newEventLog(pool *pgxpool.Pool, runner *tx.Runner, clk clock.Clock, logger *slog.Logger, c eventLogConfig) (eventLog, error) {
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
	tail, err := syncapp.NewTail(syncpg.NewReader(runner), store, listener, syncapp.TailConfig{
		PollInterval: c.tailPollInterval,
		BatchSize:    c.tailBatchSize,
		RetryBase:    c.tailRetryBase,
		RetryCap:     c.tailRetryCap,
		Logger:       logger,
	})
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
		maintenanceInterval: c.maintenanceInterval,
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
