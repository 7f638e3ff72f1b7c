package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"bothy.example.com/server/internal/apigen"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// idempotent returns the Idempotency middleware (ADR 0013) over the instance module's key
// store, for the router to run on every operation inside authentication; it acts on POST
// requests only.
func (l eventLog) idempotent(runner *tx.Runner, clk clock.Clock) apigen.MiddlewareFunc {
	return httpmw.Idempotency(l.idempotency, runner, l.idempotencyTTL, l.claimAttempts, clk)
}

// upkeepAndPurge is the maintenance's one run, for the maintenance role and bothy maintain
// alike: the event log's partition upkeep, then the purge of the idempotency keys that
// expired (claimed http.idempotency_ttl or longer before the run's time). The purge runs also
// when the upkeep failed, since neither depends on the other; the errors are joined.
type upkeepAndPurge struct {
	partitions syncapp.PartitionUpkeep
	keys       *instancepg.IdempotencyKeys
	ttl        time.Duration
	logger     *slog.Logger
}

// Upkeep implements syncapp.PartitionUpkeep.
func (u upkeepAndPurge) Upkeep(ctx context.Context, now time.Time) (syncmod.UpkeepReport, error) {
	rep, upkeepErr := u.partitions.Upkeep(ctx, now)
	purged, err := u.keys.PurgeExpired(ctx, now.Add(-u.ttl))
	if err != nil {
		err = fmt.Errorf("purge expired idempotency keys: %w", err)
	} else {
		u.logger.InfoContext(ctx, "expired idempotency keys purged", "purged", purged)
	}
	return rep, errors.Join(upkeepErr, err)
}
