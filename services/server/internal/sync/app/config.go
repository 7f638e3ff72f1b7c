package app

import (
	"errors"
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
)

// Config is every key of the sync module's use cases (the tail, maintenance, catch-up, the
// durable consumers, the snapshot and personal data), read once by the composition root
// (ConfigFrom) and checked before anything is built (Validate). The keys of its adapters (the
// log's partitions and appender, the LISTEN connection, the gateway) have their own configs
// beside those adapters.
type Config struct {
	// Tail is the sync.tail_* keys; its Logger is left for the composition root to set.
	Tail TailConfig
	// MaintenanceInterval is sync.maintenance_interval.
	MaintenanceInterval time.Duration
	// Personal holds the personal-data keys.
	Personal PersonalConfig
	// CatchUp holds the catch-up keys.
	CatchUp CatchUpConfig
	// Consumers holds sync.consumer_name_max_length and sync.max_consumers_per_principal.
	Consumers ConsumersConfig
	// SnapshotParallelism is sync.snapshot_parallelism (NewSnapshot refuses a value below 1).
	SnapshotParallelism int
}

// ConfigFrom reads the sync keys; parse errors are collected in cfg (config.Config.Err).
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		Tail: TailConfig{
			PollInterval: cfg.Duration(KeyTailPollInterval),
			BatchSize:    cfg.Int(KeyTailBatchSize),
			RetryBase:    cfg.Duration(KeyTailRetryBase),
			RetryCap:     cfg.Duration(KeyTailRetryCap),
		},
		MaintenanceInterval: cfg.Duration(KeyMaintenanceInterval),
		Personal:            PersonalConfigFrom(cfg),
		CatchUp:             CatchUpConfigFrom(cfg),
		Consumers:           ConsumersConfigFrom(cfg),
		SnapshotParallelism: cfg.Int(KeySnapshotParallelism),
	}
}

// Validate reports the values the sync use cases cannot work with, naming each key: a tail
// that never polls or never retries, an empty batch, a maintenance that never runs, and the
// personal-data, catch-up and consumer limits (their own Validate).
func (c Config) Validate() error {
	var tail error
	switch {
	case c.Tail.PollInterval <= 0:
		tail = fmt.Errorf("%s is %v, want more than 0", KeyTailPollInterval.Name, c.Tail.PollInterval)
	case c.Tail.RetryBase <= 0:
		tail = fmt.Errorf("%s is %v, want more than 0", KeyTailRetryBase.Name, c.Tail.RetryBase)
	case c.Tail.RetryCap < c.Tail.RetryBase:
		tail = fmt.Errorf("%s is %v, want at least %s (%v)", KeyTailRetryCap.Name, c.Tail.RetryCap, KeyTailRetryBase.Name, c.Tail.RetryBase)
	case c.Tail.BatchSize < 1:
		tail = fmt.Errorf("%s is %d, want at least 1", KeyTailBatchSize.Name, c.Tail.BatchSize)
	case c.MaintenanceInterval <= 0:
		tail = fmt.Errorf("%s is %v, want more than 0", KeyMaintenanceInterval.Name, c.MaintenanceInterval)
	}
	return errors.Join(tail, c.Personal.Validate(), c.CatchUp.Validate(), c.Consumers.Validate())
}
