// Package sync is the event log of bothy and everything clients synchronise with: the
// commit-ordered, gap-free log every state change appends to (spec 02, sync.event_log), its
// retention, the log tail that feeds live events, and later catch-up, the snapshot and the
// personal data of each principal.
//
// This root package holds what the module offers to the rest of the server. The event
// appender and the redactor are declared in the kernel (kernel.Appender, kernel.Redactor) so
// that every writing module can append without importing sync; the sync PostgreSQL adapter
// implements them and the composition root binds them. The types below are the module's own
// ports and the values they exchange; see README.md for the tables and the commit phase.
package sync

import "time"

// UpkeepReport says what one run of partition upkeep did to sync.event_log; `bothy maintain`
// prints it as JSON, so operators can see retention happen. Slices are never nil.
type UpkeepReport struct {
	// Created are the partitions this run created, in time order.
	Created []PartitionRange `json:"created"`
	// Dropped are the partitions this run dropped because all of their time range was older
	// than sync.event_retention, in time order.
	Dropped []PartitionRange `json:"dropped"`
	// MovedFromDefault counts the events moved out of the default partition into the time
	// partitions created for them; above zero means upkeep had fallen behind the clock.
	MovedFromDefault int64 `json:"moved_from_default"`
	// HorizonSeq is the retention horizon after the run: the highest seq retention ever
	// dropped (0 when nothing was ever dropped). No seq at or below it is served again.
	HorizonSeq int64 `json:"horizon_seq"`
}

// PartitionRange is one time partition of sync.event_log: events with From <= occurred_at < To.
type PartitionRange struct {
	// Name is the partition's table name within the sync schema.
	Name string `json:"name"`
	// From is the inclusive start of the range, in UTC.
	From time.Time `json:"from"`
	// To is the exclusive end of the range, in UTC.
	To time.Time `json:"to"`
	// LastSeq is, for a dropped partition, the highest seq it held (0 when it was empty).
	LastSeq int64 `json:"last_seq,omitempty"`
}
