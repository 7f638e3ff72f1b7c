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
// counter), the retention edge (the sync module's log), the sync epoch (the instance row) and
// the permission_version counter (for the page that follows), queued in this order by the
// adapters that own them and sent as one pipelined batch, so a check costs one round trip.
// Each statement reads its own module's schema; the batch only
// shares the trip (and, outside a transaction, PostgreSQL runs them in order, each with a
// snapshot of its own, as separate reads would).
type checkState struct {
	runner   *tx.Runner
	instance *instancepg.Store
	log      *syncpg.Reader
}

// CheckState implements syncapp.CatchUpState.
func (c checkState) CheckState(ctx context.Context) (syncapp.CheckState, error) {
	var st syncapp.CheckState
	b := &pgx.Batch{}
	c.queue(b, &st)
	if err := c.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return syncapp.CheckState{}, fmt.Errorf("head, retention edge, epoch and permission version: %w", err)
	}
	return st, nil
}

// queue queues the check's four reads on b, in their order, into st.
func (c checkState) queue(b *pgx.Batch, st *syncapp.CheckState) {
	c.instance.QueueEventSeq(b, func(head int64) { st.Head = head })
	c.log.QueueMinRetainedSeq(b, func(seq int64, ok bool) { st.MinRetainedSeq, st.Retained = seq, ok })
	c.instance.QueueSyncEpoch(b, func(epoch uuid.UUID) { st.Epoch = epoch })
	c.instance.QueuePermissionVersion(b, func(v int64) { st.PermissionVersion, st.PermissionVersionRead = v, true })
}

// consumerPageState is the consumers' syncapp.ConsumerPageState: the consumer's row (the sync
// module's ConsumerStore), then checkState's four reads, in one pipelined batch, so a
// consumer's page costs the round trips of a listEvents page (this batch, then the page). The
// row is read first: outside a transaction each statement has a snapshot of its own, in order,
// so the acked_seq read is at or below the head read after it.
type consumerPageState struct {
	check     checkState
	consumers *syncpg.ConsumerStore
}

// ConsumerPageState implements syncapp.ConsumerPageState.
func (c consumerPageState) ConsumerPageState(ctx context.Context, principalID uuid.UUID, name string) (syncmod.Consumer, bool, syncapp.CheckState, error) {
	var (
		row   syncmod.Consumer
		found bool
		st    syncapp.CheckState
	)
	b := &pgx.Batch{}
	c.consumers.QueueGet(b, principalID, name, func(got syncmod.Consumer, ok bool) { row, found = got, ok })
	c.check.queue(b, &st)
	if err := c.check.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return syncmod.Consumer{}, false, syncapp.CheckState{}, fmt.Errorf("consumer, head, retention edge, epoch and permission version: %w", err)
	}
	return row, found, st, nil
}

// snapshotState is the snapshot's syncapp.SnapshotState (and the consumers' AckState): the
// head (the event_seq counter), the sync epoch and the permission_version counter, queued in
// this order by the instance module's adapter and sent as one pipelined batch, so the
// snapshot's first reads cost one round trip. Outside a transaction PostgreSQL runs them in
// order, each with a snapshot of its own, as three separate reads would: the permission
// version is read after the head.
type snapshotState struct {
	runner   *tx.Runner
	instance *instancepg.Store
}

// AckState implements syncapp.AckState: an ack is decided on the snapshot's three first reads,
// taken, like the snapshot's, from an ackEvents request's authentication (headRoutes) when
// it read them, and read in one batch otherwise (the gateway's ack frame).
func (s snapshotState) AckState(ctx context.Context) (syncapp.SnapshotHead, error) {
	return s.SnapshotState(ctx)
}

// SnapshotState implements syncapp.SnapshotState. A getSnapshot request's authentication
// read the three with its token already (credentialStore, headRoutes): they are taken from
// there, in the same order, and nothing is read again.
func (s snapshotState) SnapshotState(ctx context.Context) (syncapp.SnapshotHead, error) {
	if st, ok := readHead(ctx); ok {
		return st, nil
	}
	var st syncapp.SnapshotHead
	b := &pgx.Batch{}
	s.instance.QueueEventSeq(b, func(head int64) { st.Seq = head })
	s.instance.QueueSyncEpoch(b, func(epoch uuid.UUID) { st.Epoch = epoch })
	s.instance.QueuePermissionVersion(b, func(v int64) { st.PermissionVersion = v })
	if err := s.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return syncapp.SnapshotHead{}, fmt.Errorf("head, sync epoch and permission version: %w", err)
	}
	return st, nil
}
