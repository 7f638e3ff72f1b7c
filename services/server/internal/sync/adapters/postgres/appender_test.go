package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/tx"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
)

func TestAppendGivesContiguousSeqsInCallOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := []kernel.Event{eventtest.Event("space.created"), eventtest.Event("channel.created"),
		eventtest.Event("thread.created"), eventtest.Event("message.created")}
	var appended []kernel.Event
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		// Three calls in one transaction: one seq range, in call order.
		for _, batch := range [][]kernel.Event{first[:1], first[1:3], first[3:]} {
			if err := e.appender.Append(ctx, batch...); err != nil {
				return err
			}
			appended = append(appended, batch...)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	second := events("agent.created", 2)
	e.commit(t, second...)

	got := e.all(t)
	if !slices.Equal(seqs(got), span(1, 6)) {
		t.Fatalf("seqs = %v, want 1..6", seqs(got))
	}
	for i, want := range append(appended, second...) {
		if got[i].Type != want.Type || got[i].ResourceID != want.ResourceID {
			t.Errorf("seq %d: %s of %s, want %s of %s (call order)", got[i].Seq, got[i].Type, got[i].ResourceID, want.Type, want.ResourceID)
		}
	}
	// One transaction, one instant, taken after the lock; the next transaction's is later.
	for _, ev := range got[1:4] {
		if !ev.OccurredAt.Equal(got[0].OccurredAt) {
			t.Errorf("seq %d occurred at %v, want its transaction's %v", ev.Seq, ev.OccurredAt, got[0].OccurredAt)
		}
	}
	if !got[4].OccurredAt.After(got[3].OccurredAt) {
		t.Errorf("the second transaction occurred at %v, not after the first's %v", got[4].OccurredAt, got[3].OccurredAt)
	}
	if h := e.head(t); h != 6 {
		t.Errorf("event_seq = %d, want 6", h)
	}
}

func TestAppendStoresEveryField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	broadcast := eventtest.Event("message.created")
	broadcast.ID = uuid.Nil // the appender assigns one
	broadcast.TraceContext = map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	personal := eventtest.Event("read_state.updated")
	personal.ID = uuid.Must(uuid.NewV7())
	before := time.Now()
	ctx := correlation.With(t.Context(), "req-alex-1")
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		return e.appender.Append(ctx, broadcast, personal)
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	after := time.Now()
	got := e.all(t)
	if len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	b, p := got[0], got[1]
	if b.ID == uuid.Nil || b.ID.Version() != 7 {
		t.Errorf("assigned id %s, want a UUIDv7", b.ID)
	}
	if p.ID != personal.ID {
		t.Errorf("id %s, want the given %s", p.ID, personal.ID)
	}
	tests := []struct {
		name      string
		got, want domain.StoredEvent
		in        kernel.Event
	}{
		{name: "broadcast", got: b, in: broadcast, want: domain.StoredEvent{
			Type: "message.created", ActorID: broadcast.ActorID, SpaceID: broadcast.SpaceID,
			ChannelID: broadcast.ChannelID, ThreadID: broadcast.ThreadID,
			ResourceKind: kernel.ResourceMessage, ResourceID: broadcast.ResourceID,
			ReceiveAction: kernel.ActionThreadRead, CorrelationID: "req-alex-1",
		}},
		{name: "personal", got: p, in: personal, want: domain.StoredEvent{
			Type: "read_state.updated", ActorID: personal.ActorID, SpaceID: personal.SpaceID,
			ChannelID: personal.ChannelID, ThreadID: personal.ThreadID,
			ResourceKind: kernel.ResourceThread, ResourceID: personal.ResourceID,
			AudienceID: personal.AudienceID, CorrelationID: "req-alex-1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := tc.got
			if g.Type != tc.want.Type || g.ActorID != tc.want.ActorID || g.SpaceID != tc.want.SpaceID ||
				g.ChannelID != tc.want.ChannelID || g.ThreadID != tc.want.ThreadID ||
				g.ResourceKind != tc.want.ResourceKind || g.ResourceID != tc.want.ResourceID ||
				g.AudienceID != tc.want.AudienceID || g.ReceiveAction != tc.want.ReceiveAction ||
				g.CorrelationID != tc.want.CorrelationID || g.Redacted {
				t.Errorf("stored %+v\nwant     %+v", g, tc.want)
			}
			if !jsonEqual(t, g.Payload, tc.in.Payload.(json.RawMessage)) {
				t.Errorf("payload %s, want %s", g.Payload, tc.in.Payload)
			}
			if g.OccurredAt.Location() != time.UTC || g.OccurredAt.Before(before.Add(-time.Second)) || g.OccurredAt.After(after.Add(time.Second)) {
				t.Errorf("occurred at %v, want UTC between %v and %v", g.OccurredAt, before, after)
			}
		})
	}
	if !jsonEqual(t, b.TraceContext, []byte(`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`)) {
		t.Errorf("trace context %s", b.TraceContext)
	}
	if p.TraceContext != nil {
		t.Errorf("trace context %s, want none", p.TraceContext)
	}
}

func TestRolledBackTransactionTakesNoSeq(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(ctx context.Context, e env) error
	}{
		{name: "fn fails after Append", fn: func(ctx context.Context, e env) error {
			if err := e.appender.Append(ctx, events("space.created", 3)...); err != nil {
				return err
			}
			return errBoom
		}},
		{name: "an ordinary hook fails", fn: func(ctx context.Context, e env) error {
			if err := e.appender.Append(ctx, events("space.created", 3)...); err != nil {
				return err
			}
			return tx.OnCommitPhase(ctx, func(context.Context) error { return errBoom })
		}},
		{name: "a hook fails after the batch ran", fn: func(ctx context.Context, e env) error {
			if err := e.appender.Append(ctx, events("space.created", 3)...); err != nil {
				return err
			}
			return tx.OnCommitPhaseLast(ctx, func(context.Context) error { return errBoom })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.commit(t, events("agent.created", 2)...)
			err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error { return tc.fn(ctx, e) })
			if !errors.Is(err, errBoom) {
				t.Fatalf("RunInTx = %v, want errBoom", err)
			}
			e.checkContiguous(t, 2)
			e.commit(t, events("agent.created", 1)...)
			e.checkContiguous(t, 3)
		})
	}
}

func TestAppendRefuses(t *testing.T) {
	t.Parallel()
	unregistered := eventtest.Event("space.created")
	unregistered.Type = "space.exploded"
	noAudience := eventtest.Event("draft.saved")
	noAudience.AudienceID = uuid.Nil
	badPayload := eventtest.Event("space.created")
	badPayload.Payload = json.RawMessage(`{"space_id": null}`)
	tests := []struct {
		name    string
		events  []kernel.Event
		outside bool
		want    error
	}{
		{name: "unregistered type", events: []kernel.Event{unregistered}, want: domain.ErrUnregisteredType},
		{name: "personal without audience", events: []kernel.Event{noAudience}, want: domain.ErrAudienceMissing},
		{name: "invalid payload", events: []kernel.Event{badPayload}, want: domain.ErrInvalidPayload},
		{name: "one bad event stages none of the call", events: []kernel.Event{eventtest.Event("space.created"), unregistered}, want: domain.ErrUnregisteredType},
		{name: "outside a transaction", events: events("space.created", 1), outside: true, want: tx.ErrNoTransaction},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tc.outside {
				if err := e.appender.Append(t.Context(), tc.events...); !errors.Is(err, tc.want) {
					t.Errorf("Append = %v, want %v", err, tc.want)
				}
				e.checkContiguous(t, 0)
				return
			}
			var appendErr error
			err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
				appendErr = e.appender.Append(ctx, tc.events...)
				return nil // commit anyway: nothing may have been staged
			})
			if err != nil {
				t.Fatalf("RunInTx: %v", err)
			}
			if !errors.Is(appendErr, tc.want) {
				t.Errorf("Append = %v, want %v", appendErr, tc.want)
			}
			e.checkContiguous(t, 0)
		})
	}
}

func TestAppendWithoutEventsWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.commit(t)
	e.checkContiguous(t, 0)
}

func TestAppendRunsAfterEveryOtherHook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var version int64
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := e.appender.Append(ctx, events("space.created", 1)...); err != nil {
			return err
		}
		// Queued after the Append, yet it must take permission_version before the appender
		// takes event_seq (instance refuses the other order with ErrLockOrder).
		return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
			if err := e.appender.Append(ctx, events("permissions.changed", 1)...); err != nil {
				return err
			}
			var err error
			version, err = e.store.AdvancePermissionVersion(ctx)
			return err
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if version != 1 {
		t.Errorf("permission_version = %d, want 1", version)
	}
	got := e.all(t)
	if len(got) != 2 || got[0].Type != "space.created" || got[1].Type != "permissions.changed" {
		t.Errorf("log = %v, want space.created then permissions.changed", got)
	}
}

func TestAppendAfterTheWriteIsTooLate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var late error
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := e.appender.Append(ctx, events("space.created", 1)...); err != nil {
			return err
		}
		return tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error {
			late = e.appender.Append(ctx, events("space.created", 1)...)
			return nil
		})
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	if !errors.Is(late, syncpg.ErrAppendTooLate) {
		t.Errorf("Append after the write = %v, want ErrAppendTooLate", late)
	}
	e.checkContiguous(t, 1)
}

func TestAppendFromGoroutinesOfOneTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const goroutines, each = 8, 3
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, goroutines)
		for i := range goroutines {
			wg.Go(func() { errs[i] = e.appender.Append(ctx, events("agent.created", each)...) })
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	e.checkContiguous(t, goroutines*each)
}

func TestNotifyCarriesTheHeadOfCommittedTransactionsOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conn, err := e.pool.Acquire(t.Context())
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "LISTEN "+syncpg.NotifyChannel); err != nil {
		t.Fatalf("listen: %v", err)
	}
	// A rolled-back transaction notifies nobody; the committed one after it carries head 3.
	err = e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := e.appender.Append(ctx, events("space.created", 2)...); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want errBoom", err)
	}
	e.commit(t, events("space.created", 3)...)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(ctx)
	if err != nil {
		t.Fatalf("wait for notification: %v", err)
	}
	if n.Channel != syncpg.NotifyChannel || n.Payload != "3" {
		t.Errorf("notification %s %q, want %s \"3\"", n.Channel, n.Payload, syncpg.NotifyChannel)
	}
	if _, err := conn.Exec(t.Context(), "UNLISTEN *"); err != nil {
		t.Fatalf("unlisten: %v", err)
	}
}
