package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/sync"
)

// upkeepLockKey is the key of the transaction advisory lock that serialises partition upkeep
// across processes: "bothyupk" in ASCII.
const upkeepLockKey int64 = 0x626f74687975706b

// partitionPrefix starts the name of every time partition; the rest is its start in UTC.
const partitionPrefix = "event_log_"

// Partitions keeps the time partitions of sync.event_log: created ahead of time, dropped once
// wholly older than the retention, with the retention horizon recorded. See Upkeep.
type Partitions struct {
	pool *pgxpool.Pool
	cfg  PartitionConfig
}

// NewPartitions returns the partition upkeep of the log in pool's database; an error wrapping
// ErrInvalidPartitionConfig when cfg does not validate.
func NewPartitions(pool *pgxpool.Pool, cfg PartitionConfig) (*Partitions, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Partitions{pool: pool, cfg: cfg}, nil
}

// span is a half-open time range [from, to).
type span struct{ from, to time.Time }

// Upkeep brings the partitions of sync.event_log up to date for the time now (the caller's
// clock, injectable for tests; the maintenance use case passes clock.Now()), in one
// transaction of its own:
//
//  1. It makes sure partitions exist for the interval holding now and the
//     sync.partitions_ahead intervals after it, aligned to sync.partition_interval from the
//     Unix epoch in UTC. Where an existing partition (of an earlier interval setting) covers
//     part of an interval, only the rest is created, so partitions never overlap.
//  2. It moves every row of the default partition (events no partition covered when they were
//     appended) into time partitions created for them, so no event is lost or left behind.
//  3. It drops every partition whose whole range ends at or before now - sync.event_retention,
//     and raises the retention horizon to the highest seq it dropped.
//
// Steps 2 and 3 and any creation lock the whole log (ACCESS EXCLUSIVE) for a few statements;
// with nothing to do, upkeep takes no table lock. Every lock wait is bounded by
// sync.upkeep_lock_timeout; on timeout nothing changes and the error says so, and the next run
// tries again. Concurrent upkeeps in several processes run one after the other. The report's
// slices are never nil.
func (p *Partitions) Upkeep(ctx context.Context, now time.Time) (sync.UpkeepReport, error) {
	rep := sync.UpkeepReport{Created: []sync.PartitionRange{}, Dropped: []sync.PartitionRange{}}
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(t pgx.Tx) error {
		return p.upkeep(ctx, t, now.UTC(), &rep)
	})
	if err != nil {
		return sync.UpkeepReport{Created: []sync.PartitionRange{}, Dropped: []sync.PartitionRange{}},
			fmt.Errorf("sync: partition upkeep: %w", err)
	}
	return rep, nil
}

func (p *Partitions) upkeep(ctx context.Context, t pgx.Tx, now time.Time, rep *sync.UpkeepReport) error {
	timeout := strconv.FormatInt(p.cfg.LockTimeout.Milliseconds(), 10) + "ms"
	if _, err := t.Exec(ctx, upkeepBegin, timeout, upkeepLockKey); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	existing, err := listPartitions(ctx, t)
	if err != nil {
		return err
	}
	current := slotStart(now, p.cfg.Interval)
	want := make([]span, 0, p.cfg.Ahead+1)
	for i := range p.cfg.Ahead + 1 {
		from := current.Add(time.Duration(i) * p.cfg.Interval)
		want = append(want, span{from, from.Add(p.cfg.Interval)})
	}
	cutoff := now.Add(-p.cfg.Retention)
	var defaultRows bool
	if err := t.QueryRow(ctx, defaultPartitionHasRows).Scan(&defaultRows); err != nil {
		return fmt.Errorf("look into the default partition: %w", err)
	}
	if !defaultRows && len(uncovered(want, existing)) == 0 && !slices.ContainsFunc(existing, func(r sync.PartitionRange) bool { return !r.To.After(cutoff) }) {
		return readHorizon(ctx, t, rep)
	}

	if _, err := t.Exec(ctx, eventLogLock); err != nil {
		return fmt.Errorf("lock the event log: %w", err)
	}
	moved, slots, err := p.moveOutOfDefault(ctx, t)
	if err != nil {
		return err
	}
	rep.MovedFromDefault = moved
	for _, s := range uncovered(append(want, slots...), existing) {
		r, err := createPartition(ctx, t, s)
		if err != nil {
			return err
		}
		rep.Created = append(rep.Created, r)
		existing = append(existing, r)
	}
	if moved > 0 {
		if _, err := t.Exec(ctx, movingMoveIn); err != nil {
			return fmt.Errorf("move rows into their partitions: %w", err)
		}
	}
	slices.SortFunc(existing, func(a, b sync.PartitionRange) int { return a.From.Compare(b.From) })
	var horizon int64
	for _, r := range existing {
		if r.To.After(cutoff) {
			continue
		}
		if r.LastSeq, err = dropPartition(ctx, t, r.Name); err != nil {
			return err
		}
		horizon = max(horizon, r.LastSeq)
		rep.Dropped = append(rep.Dropped, r)
	}
	if horizon > 0 {
		if err := t.QueryRow(ctx, horizonRaise, horizon).Scan(&rep.HorizonSeq); err != nil {
			return fmt.Errorf("raise the retention horizon: %w", err)
		}
		return nil
	}
	return readHorizon(ctx, t, rep)
}

// moveOutOfDefault empties the default partition into a temporary table and returns how many
// rows it moved and the partition slots they need. The caller holds the log's lock.
func (p *Partitions) moveOutOfDefault(ctx context.Context, t pgx.Tx) (int64, []span, error) {
	var has bool
	if err := t.QueryRow(ctx, defaultPartitionHasRows).Scan(&has); err != nil {
		return 0, nil, fmt.Errorf("look into the default partition: %w", err)
	}
	if !has {
		return 0, nil, nil
	}
	if _, err := t.Exec(ctx, defaultPartitionMoveOut); err != nil {
		return 0, nil, fmt.Errorf("move rows out of the default partition: %w", err)
	}
	rows, err := t.Query(ctx, movingSlots, p.cfg.Interval.Seconds())
	if err != nil {
		return 0, nil, fmt.Errorf("slots of the default partition's rows: %w", err)
	}
	var (
		moved int64
		slots []span
		from  time.Time
		n     int64
	)
	_, err = pgx.ForEachRow(rows, []any{&from, &n}, func() error {
		moved += n
		slots = append(slots, span{from.UTC(), from.UTC().Add(p.cfg.Interval)})
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("slots of the default partition's rows: %w", err)
	}
	return moved, slots, nil
}

func listPartitions(ctx context.Context, t pgx.Tx) ([]sync.PartitionRange, error) {
	rows, err := t.Query(ctx, partitionsList)
	if err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	var r sync.PartitionRange
	var out []sync.PartitionRange
	_, err = pgx.ForEachRow(rows, []any{&r.Name, &r.From, &r.To}, func() error {
		out = append(out, sync.PartitionRange{Name: r.Name, From: r.From.UTC(), To: r.To.UTC()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	return out, nil
}

func createPartition(ctx context.Context, t pgx.Tx, s span) (sync.PartitionRange, error) {
	r := sync.PartitionRange{Name: partitionName(s.from), From: s.from, To: s.to}
	ddl := fmt.Sprintf(partitionCreate, qualified(r.Name), timestampLiteral(s.from), timestampLiteral(s.to))
	if _, err := t.Exec(ctx, ddl); err != nil {
		return r, fmt.Errorf("create partition %s: %w", r.Name, err)
	}
	if _, err := t.Exec(ctx, partitionRecord, r.Name, r.From, r.To); err != nil {
		return r, fmt.Errorf("record partition %s: %w", r.Name, err)
	}
	return r, nil
}

// dropPartition drops one partition and returns the highest seq it held (0 when empty).
func dropPartition(ctx context.Context, t pgx.Tx, name string) (int64, error) {
	var last *int64
	// A recorded partition that is missing (dropped by hand) fails here, loudly: its seqs are
	// unknown, so the retention horizon could not be kept right.
	if err := t.QueryRow(ctx, fmt.Sprintf(partitionMaxSeq, qualified(name))).Scan(&last); err != nil {
		return 0, fmt.Errorf("highest seq of partition %s: %w", name, err)
	}
	if _, err := t.Exec(ctx, fmt.Sprintf(partitionDrop, qualified(name))); err != nil {
		return 0, fmt.Errorf("drop partition %s: %w", name, err)
	}
	if _, err := t.Exec(ctx, partitionForget, name); err != nil {
		return 0, fmt.Errorf("forget partition %s: %w", name, err)
	}
	if last == nil {
		return 0, nil
	}
	return *last, nil
}

func readHorizon(ctx context.Context, t pgx.Tx, rep *sync.UpkeepReport) error {
	if err := t.QueryRow(ctx, horizonGet).Scan(&rep.HorizonSeq); err != nil {
		return fmt.Errorf("read the retention horizon: %w", err)
	}
	return nil
}

// slotStart returns the start of the partition slot holding t: the latest multiple of
// interval since the Unix epoch at or before t, in UTC.
func slotStart(t time.Time, interval time.Duration) time.Time {
	ns := t.UnixNano()
	d := int64(interval)
	rem := ns % d
	if rem < 0 {
		rem += d
	}
	return time.Unix(0, ns-rem).UTC()
}

// uncovered returns the parts of want that no range of have covers, in time order: the
// partitions still to create. Each wanted slot stays a partition of its own; only overlapping
// wants (the same slot asked for twice) are merged.
func uncovered(want []span, have []sync.PartitionRange) []span {
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b span) int { return a.from.Compare(b.from) })
	var merged []span
	for _, w := range want {
		if n := len(merged); n > 0 && w.from.Before(merged[n-1].to) {
			if w.to.After(merged[n-1].to) {
				merged[n-1].to = w.to
			}
			continue
		}
		merged = append(merged, w)
	}
	covered := make([]span, len(have))
	for i, h := range have {
		covered[i] = span{h.From, h.To}
	}
	slices.SortFunc(covered, func(a, b span) int { return a.from.Compare(b.from) })
	var out []span
	for _, w := range merged {
		from := w.from
		for _, c := range covered {
			if !c.to.After(from) || !c.from.Before(w.to) {
				continue // ends before the rest of w, or starts after w
			}
			if c.from.After(from) {
				out = append(out, span{from, c.from})
			}
			if c.to.After(from) {
				from = c.to
			}
		}
		if from.Before(w.to) {
			out = append(out, span{from, w.to})
		}
	}
	return out
}

// partitionName names a partition after its start in UTC, e.g. event_log_20261130t000000z;
// starts are unique because partitions never overlap.
func partitionName(from time.Time) string {
	return partitionPrefix + strings.ToLower(from.UTC().Format("20060102T150405Z"))
}

func qualified(name string) string {
	return pgx.Identifier{Schema, name}.Sanitize()
}

// timestampLiteral quotes t as a timestamptz literal with an explicit UTC offset.
func timestampLiteral(t time.Time) string {
	return "'" + t.UTC().Format("2006-01-02 15:04:05.999999Z07:00") + "'"
}
