package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
	syncmod "bothy.example.com/server/internal/sync"
)

// PartitionUpkeep keeps the log's time partitions in shape (the PostgreSQL adapter's
// Partitions): it creates the partitions ahead of now and drops those wholly older than the
// retention. The maintenance use case passes the time, so tests can move a fake clock.
type PartitionUpkeep interface {
	// Upkeep brings the partitions in line with now and reports what it did. It is safe to
	// run concurrently from several processes (the adapter serializes runs) and to repeat.
	Upkeep(ctx context.Context, now time.Time) (syncmod.UpkeepReport, error)
}

// Maintenance is the log's maintenance use case: `bothy maintain` runs it once, the
// maintenance role of `bothy serve` periodically.
type Maintenance struct {
	upkeep PartitionUpkeep
	clock  clock.Clock
	log    *slog.Logger
}

// NewMaintenance returns the use case over upkeep, reading the time from clk (nil means the
// system clock) and logging to logger (nil discards).
func NewMaintenance(upkeep PartitionUpkeep, clk clock.Clock, logger *slog.Logger) *Maintenance {
	if clk == nil {
		clk = clock.System()
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Maintenance{upkeep: upkeep, clock: clk, log: logger}
}

// Maintain runs one partition upkeep at the clock's current time and returns its report. The
// error wraps the upkeep's.
func (m *Maintenance) Maintain(ctx context.Context) (syncmod.UpkeepReport, error) {
	now := m.clock.Now()
	rep, err := m.upkeep.Upkeep(ctx, now)
	if err != nil {
		return rep, fmt.Errorf("partition upkeep at %s: %w", now.Format(time.RFC3339), err)
	}
	return rep, nil
}

// Run is the maintenance role: it runs Maintain at once and then every interval until ctx
// ends, logging each run's report (or its failure: a failed run is retried at the next tick,
// never ends the role), and returns nil when ctx ends. interval must be positive.
func (m *Maintenance) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("maintenance: interval %v, want more than 0", interval)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	m.log.InfoContext(ctx, "maintenance started", "interval", interval.String())
	for {
		m.runOnce(ctx)
		select {
		case <-ctx.Done():
			m.log.InfoContext(ctx, "maintenance stopped")
			return nil
		case <-ticker.C:
		}
	}
}

func (m *Maintenance) runOnce(ctx context.Context) {
	began := time.Now()
	rep, err := m.Maintain(ctx)
	took := time.Since(began)
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Stopping in the middle of a run is not a failure.
	case err != nil:
		m.log.ErrorContext(ctx, "partition upkeep failed; retrying at the next run", "error", err.Error(), "took", took.String())
	default:
		m.log.InfoContext(ctx, "partition upkeep done",
			"created", len(rep.Created), "dropped", len(rep.Dropped),
			"moved_from_default", rep.MovedFromDefault, "horizon_seq", rep.HorizonSeq,
			"took", took.String())
	}
}
