package app

import "bothy.example.com/server/internal/kernel/config"

// Configuration keys of the log tail and of the maintenance role; wire reads them.
var (
	// KeyTailPollInterval is the tail's fallback when notifications are lost or the listener
	// is reconnecting: the longest a live event waits then. Short enough to be a tolerable
	// delay, long enough that an idle process costs the database one cheap query per interval.
	KeyTailPollInterval = config.Define("sync.tail_poll_interval", config.KindDuration, "1s",
		"how long the log tail waits without a notification before it reads the log anyway")
	// KeyTailBatchSize bounds one read of the tail and so the memory one batch holds in
	// every subscriber's buffer.
	KeyTailBatchSize = config.Define("sync.tail_batch_size", config.KindInt, "500",
		"most events the log tail reads in one query and hands to subscribers as one batch")
	// KeyMaintenanceInterval paces the maintenance role: partitions are created
	// sync.partitions_ahead intervals ahead, so an hourly run has ample margin.
	KeyMaintenanceInterval = config.Define("sync.maintenance_interval", config.KindDuration, "1h",
		"how often the maintenance role of bothy serve runs the partition upkeep of the event log")
)
