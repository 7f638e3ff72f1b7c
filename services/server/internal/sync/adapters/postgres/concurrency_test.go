package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/sync/domain"
)

// The shape of the concurrency property test: enough transactions to interleave writers and
// readers thoroughly, few enough that a run under -race stays around a second.
const (
	propWriters      = 8
	propTxPerWriter  = 50
	propMaxEvents    = 5 // events per transaction: 1..propMaxEvents
	propRollbackOdds = 4 // one transaction in propRollbackOdds rolls back
	propReaders      = 3
	propMaxPage      = 7 // a reader's page size: 1..propMaxPage
)

// seedEnv fixes the seed of the concurrency property test, to replay a logged run.
const seedEnv = "SYNCPG_TEST_SEED"

// writtenTx is what one writer transaction did, as the writer saw it.
type writtenTx struct {
	ids        []uuid.UUID // the event ids in call order
	committed  bool
	start, end time.Time // before RunInTx, after it returned
}

// TestConcurrencyProperty is the log's central property (spec 07): with concurrent
// writers, some of whose transactions roll back, and concurrent readers polling by seq, every
// reader sees every committed seq exactly once, in order, without a gap; rolled-back
// transactions take no seq; each transaction's events get contiguous seqs in call order; seq
// order is commit order; and occurred_at, taken under the counter lock, never decreases as seq
// rises and never lies after the writer saw its commit.
func TestConcurrencyProperty(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(seedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", seedEnv, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)

	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	cfg.MaxConns = propWriters + propReaders + 1
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	e := envOn(pool)
	ctx := t.Context()

	written := make([][]writtenTx, propWriters)
	writerErrs := make([]error, propWriters)
	var writers sync.WaitGroup
	for w := range propWriters {
		rng := rand.New(rand.NewPCG(seed, uint64(w))) //nolint:gosec // G404: a seeded, replayable test schedule, not a secret
		writers.Go(func() {
			for range propTxPerWriter {
				wt, err := writeOne(ctx, e, rng)
				if err != nil {
					writerErrs[w] = err
					return
				}
				written[w] = append(written[w], wt)
			}
		})
	}

	writersDone := make(chan struct{})
	seen := make([][]domain.StoredEvent, propReaders)
	readerErrs := make([]error, propReaders)
	var readers sync.WaitGroup
	for r := range propReaders {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+r))) //nolint:gosec // G404: a seeded, replayable test schedule, not a secret
		readers.Go(func() {
			seen[r], readerErrs[r] = readAll(ctx, e, rng, writersDone)
		})
	}
	writers.Wait()
	close(writersDone)
	readers.Wait()
	if err := errors.Join(append(writerErrs, readerErrs...)...); err != nil {
		t.Fatal(err)
	}

	// What was committed, and where each event must be.
	var committed []writtenTx
	rolledBack := map[uuid.UUID]bool{}
	total := 0
	for _, txs := range written {
		for _, wt := range txs {
			if wt.committed {
				committed = append(committed, wt)
				total += len(wt.ids)
				continue
			}
			for _, id := range wt.ids {
				rolledBack[id] = true
			}
		}
	}
	if head := e.head(t); head != int64(total) {
		t.Fatalf("event_seq = %d, want %d committed events (rolled-back transactions took seqs)", head, total)
	}
	for r, events := range seen {
		if len(events) != total {
			t.Fatalf("reader %d saw %d events, want %d", r, len(events), total)
		}
		bySeq := map[uuid.UUID]int64{}
		for i, ev := range events {
			if ev.Seq != int64(i+1) {
				t.Fatalf("reader %d: event %d has seq %d: a gap, duplicate or reordering", r, i, ev.Seq)
			}
			if rolledBack[ev.ID] {
				t.Fatalf("reader %d: seq %d is an event of a rolled-back transaction", r, ev.Seq)
			}
			if i > 0 && ev.OccurredAt.Before(events[i-1].OccurredAt) {
				t.Fatalf("reader %d: seq %d occurred at %v, before seq %d at %v", r, ev.Seq, ev.OccurredAt, ev.Seq-1, events[i-1].OccurredAt)
			}
			bySeq[ev.ID] = ev.Seq
		}
		checkTransactions(t, committed, bySeq, events)
	}
}

// writeOne runs one writer transaction: 1..propMaxEvents events in one to three Append calls,
// rolled back one time in propRollbackOdds by an error after the appends.
func writeOne(ctx context.Context, e env, rng *rand.Rand) (writtenTx, error) {
	n := 1 + rng.IntN(propMaxEvents)
	evs := make([]kernel.Event, n)
	wt := writtenTx{ids: make([]uuid.UUID, n)}
	for i := range evs {
		evs[i] = events("space.created", 1)[0]
		wt.ids[i] = evs[i].ID
	}
	rollback := rng.IntN(propRollbackOdds) == 0
	cut := rng.IntN(n + 1)
	wt.start = time.Now()
	err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
		if err := e.appender.Append(ctx, evs[:cut]...); err != nil {
			return err
		}
		if err := e.appender.Append(ctx, evs[cut:]...); err != nil {
			return err
		}
		if rollback {
			return errBoom
		}
		return nil
	})
	wt.end = time.Now()
	switch {
	case rollback && errors.Is(err, errBoom):
		return wt, nil
	case err != nil:
		return wt, fmt.Errorf("writer transaction: %w", err)
	}
	wt.committed = true
	return wt, nil
}

// readAll polls the log by seq with random page sizes until it has read up to the head the
// counter shows once every writer is done; it fails on the first gap, duplicate or reordering.
func readAll(ctx context.Context, e env, rng *rand.Rand, writersDone <-chan struct{}) ([]domain.StoredEvent, error) {
	var got []domain.StoredEvent
	var last int64
	final := int64(-1)
	for final < 0 || last < final {
		if final < 0 {
			select {
			case <-writersDone:
				h, err := e.store.EventSeq(ctx)
				if err != nil {
					return nil, err
				}
				final = h
			default:
			}
		}
		page, err := e.reader.EventsAfter(ctx, last, 1+rng.IntN(propMaxPage))
		if err != nil {
			return nil, err
		}
		for _, ev := range page {
			if ev.Seq != last+1 {
				return nil, fmt.Errorf("read seq %d after %d: a gap, duplicate or reordering", ev.Seq, last)
			}
			last = ev.Seq
			got = append(got, ev)
		}
	}
	return got, nil
}

// checkTransactions checks each committed transaction against what a reader saw: its events
// have contiguous seqs in call order and one occurred_at that is not after the writer saw the
// commit; and a transaction that committed before another began has the lower seqs.
func checkTransactions(t *testing.T, committed []writtenTx, bySeq map[uuid.UUID]int64, events []domain.StoredEvent) {
	t.Helper()
	type placed struct {
		first, last int64
		wt          writtenTx
	}
	all := make([]placed, 0, len(committed))
	for _, wt := range committed {
		first, ok := bySeq[wt.ids[0]]
		if !ok {
			t.Fatalf("committed event %s was never read", wt.ids[0])
		}
		for i, id := range wt.ids {
			if s, ok := bySeq[id]; !ok || s != first+int64(i) {
				t.Fatalf("event %d of a transaction has seq %d, want %d (contiguous, in call order)", i, s, first+int64(i))
			}
			at := events[first+int64(i)-1].OccurredAt
			if !at.Equal(events[first-1].OccurredAt) {
				t.Fatalf("seq %d occurred at %v, its transaction's first event at %v", first+int64(i), at, events[first-1].OccurredAt)
			}
		}
		if at := events[first-1].OccurredAt; at.After(wt.end) {
			t.Fatalf("seq %d occurred at %v, after its writer saw the commit at %v", first, at, wt.end)
		}
		all = append(all, placed{first: first, last: first + int64(len(wt.ids)) - 1, wt: wt})
	}
	for _, a := range all {
		for _, b := range all {
			if a.wt.end.Before(b.wt.start) && a.last >= b.first {
				t.Fatalf("a transaction committed before another began, yet has seqs %d..%d, not below %d..%d", a.first, a.last, b.first, b.last)
			}
		}
	}
}
