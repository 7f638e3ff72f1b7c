package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	syncmod "bothy.example.com/server/internal/sync"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// TestConsumerAdvanceInEpoch: the ack's one statement moves a consumer forward only when it is
// behind the seq and of the epoch given, and writes nothing otherwise (missing, behind it,
// another epoch).
func TestConsumerAdvanceInEpoch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	store := syncpg.NewConsumerStore(e.runner)
	epoch, agent := uuid.New(), uuid.New()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, created, err := store.Create(ctx, syncmod.Consumer{PrincipalID: agent, Name: "main", AckedSeq: 5, SyncEpoch: epoch, CreatedAt: at, UpdatedAt: at}, 4); err != nil || !created {
		t.Fatalf("Create = %v, %v", created, err)
	}
	later := at.Add(time.Minute)
	for _, tc := range []struct {
		name  string
		who   uuid.UUID
		cname string
		seq   int64
		epoch uuid.UUID
		ok    bool
	}{
		{"another epoch", agent, "main", 9, uuid.New(), false},
		{"the same seq", agent, "main", 5, epoch, false},
		{"behind", agent, "main", 4, epoch, false},
		{"another name", agent, "other", 9, epoch, false},
		{"another principal", uuid.New(), "main", 9, epoch, false},
		{"forward", agent, "main", 9, epoch, true},
	} {
		got, ok, err := store.AdvanceInEpoch(ctx, tc.who, tc.cname, tc.seq, tc.epoch, later)
		if err != nil || ok != tc.ok {
			t.Fatalf("%s: AdvanceInEpoch = %v, %v; want ok %v", tc.name, ok, err, tc.ok)
		}
		row, found, err := store.Get(ctx, agent, "main")
		if err != nil || !found {
			t.Fatalf("%s: Get = %v, %v", tc.name, found, err)
		}
		want, wantAt := int64(5), at
		if tc.ok {
			want, wantAt = 9, later
			if got != row {
				t.Fatalf("%s: returned %+v, stored %+v", tc.name, got, row)
			}
		}
		if row.AckedSeq != want || !row.UpdatedAt.Equal(wantAt) || row.SyncEpoch != epoch {
			t.Fatalf("%s: stored %+v, want acked_seq %d updated at %v", tc.name, row, want, wantAt)
		}
	}
	// Inside a transaction it is a plain update, committed (or not) by the transaction.
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		_, ok, err := store.AdvanceInEpoch(ctx, agent, "main", 12, epoch, later)
		if err == nil && !ok {
			err = errors.New("not advanced")
		}
		return err
	})
	if row, _, _ := store.Get(ctx, agent, "main"); err != nil || row.AckedSeq != 12 {
		t.Fatalf("in a transaction: %v, stored %+v", err, row)
	}
}

// TestConsumerQueueGet: the queued read answers what Get answers, in a batch shared with
// other statements (wire's consumer page), and ok false for a name the principal does not hold.
func TestConsumerQueueGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	store := syncpg.NewConsumerStore(e.runner)
	epoch, agent := uuid.New(), uuid.New()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, created, err := store.Create(ctx, syncmod.Consumer{PrincipalID: agent, Name: "main", AckedSeq: 7, SyncEpoch: epoch, CreatedAt: at, UpdatedAt: at}, 4); err != nil || !created {
		t.Fatalf("Create = %v, %v", created, err)
	}
	want, found, err := store.Get(ctx, agent, "main")
	if err != nil || !found {
		t.Fatalf("Get = %v, %v", found, err)
	}
	type answer struct {
		c  syncmod.Consumer
		ok bool
	}
	var main, other, stranger answer
	var one int
	b := &pgx.Batch{}
	store.QueueGet(b, agent, "main", func(c syncmod.Consumer, ok bool) { main = answer{c, ok} })
	b.Queue("SELECT 1").QueryRow(func(row pgx.Row) error { return row.Scan(&one) })
	store.QueueGet(b, agent, "other", func(c syncmod.Consumer, ok bool) { other = answer{c, ok} })
	store.QueueGet(b, uuid.New(), "main", func(c syncmod.Consumer, ok bool) { stranger = answer{c, ok} })
	if err := e.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		t.Fatalf("the batch: %v", err)
	}
	if !main.ok || main.c != want || one != 1 {
		t.Fatalf("QueueGet(main) = %+v (the batch's other statement %d), want %+v", main, one, want)
	}
	if other.ok || stranger.ok {
		t.Fatalf("QueueGet of a name not held = %+v, %+v; want ok false", other, stranger)
	}
}
