package wire

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// CatchUp returns the process's catch-up (the sync.CatchUp port listEvents and the gateway's
// resume share), for the benchmark, which measures a page through it beside the same page
// over HTTP.
func (a *App) CatchUp() syncmod.CatchUp {
	return a.sync.catchUp
}

// checkState is catch-up's syncapp.CatchUpState: the head (the instance module's event_seq
// counter), the retention edge (the sync module's log) and the sync epoch (the instance row),
// queued in this order by the adapters that own them and sent as one pipelined batch, so a
// check costs one round trip. Each statement reads its own module's schema; the batch only
// shares the trip (and, outside a transaction, PostgreSQL runs them in order, each with a
// snapshot of its own, as three separate reads would).
type checkState struct {
	runner   *tx.Runner
	instance *instancepg.Store
	log      *syncpg.Reader
}

// CheckState implements syncapp.CatchUpState.
func (c checkState) CheckState(ctx context.Context) (syncapp.CheckState, error) {
	var st syncapp.CheckState
	b := &pgx.Batch{}
	c.instance.QueueEventSeq(b, func(head int64) { st.Head = head })
	c.log.QueueMinRetainedSeq(b, func(seq int64, ok bool) { st.MinRetainedSeq, st.Retained = seq, ok })
	c.instance.QueueSyncEpoch(b, func(epoch uuid.UUID) { st.Epoch = epoch })
	if err := c.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return syncapp.CheckState{}, fmt.Errorf("head, retention edge and epoch: %w", err)
	}
	return st, nil
}
