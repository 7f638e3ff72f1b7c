// Package postgres implements the sync module's event log on PostgreSQL: the schema sync with
// sync.event_log (partitioned by occurred_at), the appender (kernel.Appender and
// kernel.Redactor), the readers the log tail and catch-up use (EventsAfter, MinRetainedSeq),
// and partition upkeep with retention.
//
// The appender stages a transaction's events in memory and writes them all in one round trip
// in the transaction's last commit-phase hook: one batch with the event_seq advance (the
// instance module's Counters port), one INSERT of every event and a pg_notify on
// NotifyChannel carrying the new head, after taking one of the process's admission slots
// (sync.append_concurrency), which the transaction gives back when it ends. See ADR 0010.
package postgres

import (
	"embed"
	"fmt"
	"io/fs"

	"bothy.example.com/server/internal/kernel/migrate"
)

// Schema is the PostgreSQL schema the sync module owns.
const Schema = "sync"

// NotifyChannel is the channel the appender notifies in every transaction that appends
// events; the payload is the new head seq (the last seq the transaction took) as decimal text.
// PostgreSQL delivers it when, and only if, the transaction commits.
const NotifyChannel = "bothy_event_log"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the sync module's migration set (schema sync, the event log with its
// default partition, the partition bookkeeping and the retention horizon); the composition
// root applies it after the sets of the modules before sync in the register.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("sync: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/events_after.sql
	eventsAfter string
	//go:embed queries/min_retained_seq.sql
	minRetainedSeq string

	//go:embed queries/upkeep_begin.sql
	upkeepBegin string
	//go:embed queries/partitions_list.sql
	partitionsList string
	//go:embed queries/default_partition_has_rows.sql
	defaultPartitionHasRows string
	//go:embed queries/event_log_lock.sql
	eventLogLock string
	//go:embed queries/default_partition_move_out.sql
	defaultPartitionMoveOut string
	//go:embed queries/moving_slots.sql
	movingSlots string
	//go:embed queries/moving_move_in.sql
	movingMoveIn string
	//go:embed queries/partition_create.sql
	partitionCreate string
	//go:embed queries/partition_record.sql
	partitionRecord string
	//go:embed queries/partition_max_seq.sql
	partitionMaxSeq string
	//go:embed queries/partition_drop.sql
	partitionDrop string
	//go:embed queries/partition_forget.sql
	partitionForget string
	//go:embed queries/horizon_raise.sql
	horizonRaise string
	//go:embed queries/horizon_get.sql
	horizonGet string
)
