package wire

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identitydomain "bothy.example.com/server/internal/identity/domain"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// The deliberate cross-module batch reads of the process, all in this file.
//
// A module's tables are its own (spec 01): every statement below is queued by the adapter
// of the module that owns its table, and no module reads another's schema. What the
// composition root adds is the trip: the reads a hot path needs from two or three modules
// (the request's token and the permission version; catch-up's head, retention edge, epoch
// and permission version; the snapshot's head, epoch and version; a consumer's row and
// catch-up's four) are sent as one pipelined pgx.Batch, so each path costs one round trip
// where separate reads would cost one per module (docs/benchmarks.md measures the paths).
// Outside a transaction PostgreSQL runs a batch's statements in order, each with a snapshot
// of its own, exactly as the separate reads would: the batches change the cost, never the
// answer. Only the composition root may do this, since only it knows every module.

// credentialStore is the identity module's store as wire hands it to identity: Credential of
// a request that withVersionRead marked also reads the instance module's permission_version,
// each statement queued by the adapter that owns its table, in one pipelined batch (as
// catch-up's checkState does). Every other call is the identity store's own.
type credentialStore struct {
	*identitypg.Store
	runner   *tx.Runner
	instance *instancepg.Store
}

// Credential implements identity's app.Store.
func (s credentialStore) Credential(ctx context.Context, hash identitydomain.TokenHash) (identitydomain.Credential, error) {
	vr, _ := ctx.Value(versionReadKey{}).(*versionRead)
	if vr == nil {
		return s.Store.Credential(ctx, hash)
	}
	var (
		cred identitydomain.Credential
		cerr error
	)
	b := &pgx.Batch{}
	s.QueueCredential(b, hash, func(c identitydomain.Credential, err error) { cred, cerr = c, err })
	var head syncapp.SnapshotHead
	if vr.wantHead {
		// In snapshotState's order: the head first, the permission version after it.
		s.instance.QueueEventSeq(b, func(seq int64) { head.Seq = seq })
		s.instance.QueueSyncEpoch(b, func(epoch uuid.UUID) { head.Epoch = epoch })
	}
	s.instance.QueuePermissionVersion(b, func(v int64) { vr.v, vr.ok = v, true })
	if err := s.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return identitydomain.Credential{}, fmt.Errorf("token and permission version: %w", err)
	}
	if vr.wantHead {
		head.PermissionVersion = vr.v
		vr.head = &head
	}
	return cred, cerr
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
