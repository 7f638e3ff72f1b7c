package postgres

import (
	"errors"
	"fmt"
	"time"

	"bothy.example.com/server/internal/kernel/config"
)

// The configuration keys of the event log's partitions. They are defined here, next to the
// upkeep that reads them; the composition root reads them all with PartitionConfigFrom.
var (
	// PartitionInterval is the time span of one partition of sync.event_log. Partitions are
	// aligned to multiples of it from the Unix epoch in UTC, so 24h gives one partition per
	// UTC day whatever the time zone of the machines.
	PartitionInterval = config.Define("sync.partition_interval", config.KindDuration, "24h",
		"time span of one partition of the event log, aligned from the Unix epoch in UTC; whole seconds, at least 1m")
	// PartitionsAhead is how many partitions upkeep keeps ready after the current one, so a
	// missed maintenance run or two never sends events into the default partition.
	PartitionsAhead = config.Define("sync.partitions_ahead", config.KindInt, "3",
		"event log partitions partition upkeep keeps ready after the current one (at least 1)")
	// EventRetention is how long events are kept: upkeep drops a partition once all of it is
	// older than this, and catch-up from before it answers resync_required (reason retention).
	EventRetention = config.Define("sync.event_retention", config.KindDuration, "2160h",
		"events older than this are dropped with their whole partition by partition upkeep; catch-up from before them answers resync_required")
	// UpkeepLockTimeout bounds how long upkeep waits for the event log's table lock. Appends
	// queue behind a waiting upkeep, so a short wait that fails (and is retried at the next
	// run) is better than a long stall of every writer behind a slow reader.
	UpkeepLockTimeout = config.Define("sync.upkeep_lock_timeout", config.KindDuration, "1s",
		"how long partition upkeep waits for the event log's lock before it gives up until its next run; appends wait behind it meanwhile")
)

// ErrInvalidPartitionConfig is wrapped by the errors of PartitionConfig.Validate and
// NewPartitions for a configuration upkeep cannot work with.
var ErrInvalidPartitionConfig = errors.New("sync: invalid partition configuration")

// PartitionConfig is what partition upkeep needs to know; see the keys of the same names.
type PartitionConfig struct {
	// Interval is sync.partition_interval.
	Interval time.Duration
	// Ahead is sync.partitions_ahead.
	Ahead int
	// Retention is sync.event_retention.
	Retention time.Duration
	// LockTimeout is sync.upkeep_lock_timeout.
	LockTimeout time.Duration
}

// PartitionConfigFrom reads every partition key from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func PartitionConfigFrom(cfg *config.Config) PartitionConfig {
	return PartitionConfig{
		Interval:    cfg.Duration(PartitionInterval),
		Ahead:       cfg.Int(PartitionsAhead),
		Retention:   cfg.Duration(EventRetention),
		LockTimeout: cfg.Duration(UpkeepLockTimeout),
	}
}

// Validate returns an error wrapping ErrInvalidPartitionConfig when c cannot work: an interval
// below a minute or not in whole seconds (partition bounds are whole seconds), fewer than one
// partition ahead, or a retention or lock timeout that is not positive (a zero lock timeout
// would mean waiting forever).
func (c PartitionConfig) Validate() error {
	switch {
	case c.Interval < time.Minute || c.Interval%time.Second != 0:
		return fmt.Errorf("%w: %s is %v, want whole seconds and at least 1m", ErrInvalidPartitionConfig, PartitionInterval.Name, c.Interval)
	case c.Ahead < 1:
		return fmt.Errorf("%w: %s is %d, want at least 1", ErrInvalidPartitionConfig, PartitionsAhead.Name, c.Ahead)
	case c.Retention <= 0:
		return fmt.Errorf("%w: %s is %v, want more than 0", ErrInvalidPartitionConfig, EventRetention.Name, c.Retention)
	case c.LockTimeout <= 0:
		return fmt.Errorf("%w: %s is %v, want more than 0", ErrInvalidPartitionConfig, UpkeepLockTimeout.Name, c.LockTimeout)
	}
	return nil
}

// AppendConcurrency is the size of the appender's admission semaphore: how many transactions
// of one process may be between their event_seq advance and their end at once. The counter's
// row lock serializes those transactions anyway; admitting more only adds backends that wait
// in PostgreSQL's lock manager and are all woken at every commit. See ADR 0010, "Admission".
var AppendConcurrency = config.Define("sync.append_concurrency", config.KindInt, "2",
	"most transactions of one process that may be in the event log's locked section (from the event_seq advance to the end) at once; the others wait in the process (at least 1)")

// ErrInvalidAppendConfig is wrapped by the errors of AppendConfig.Validate and NewAppender for
// a configuration the appender cannot work with.
var ErrInvalidAppendConfig = errors.New("sync: invalid append configuration")

// AppendConfig is what the appender needs to know; see the key of the same name.
type AppendConfig struct {
	// Concurrency is sync.append_concurrency.
	Concurrency int
}

// AppendConfigFrom reads the appender's keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func AppendConfigFrom(cfg *config.Config) AppendConfig {
	return AppendConfig{Concurrency: cfg.Int(AppendConcurrency)}
}

// Validate returns an error wrapping ErrInvalidAppendConfig when c cannot work: a concurrency
// below 1 would admit no transaction at all.
func (c AppendConfig) Validate() error {
	if c.Concurrency < 1 {
		return fmt.Errorf("%w: %s is %d, want at least 1", ErrInvalidAppendConfig, AppendConcurrency.Name, c.Concurrency)
	}
	return nil
}
