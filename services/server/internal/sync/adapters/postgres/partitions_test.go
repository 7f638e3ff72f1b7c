package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/sync"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// base is a UTC midnight the partition tests build on.
var base = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func newPartitions(t *testing.T, e env, interval time.Duration, ahead int, retention time.Duration) *syncpg.Partitions {
	t.Helper()
	p, err := syncpg.NewPartitions(e.pool, syncpg.PartitionConfig{
		Interval: interval, Ahead: ahead, Retention: retention, LockTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatalf("NewPartitions: %v", err)
	}
	return p
}

func upkeep(t *testing.T, p *syncpg.Partitions, now time.Time) sync.UpkeepReport {
	t.Helper()
	rep, err := p.Upkeep(t.Context(), now)
	if err != nil {
		t.Fatalf("Upkeep at %v: %v", now, err)
	}
	raw, err := json.Marshal(rep)
	if err != nil || strings.Contains(string(raw), "null") {
		t.Errorf("report %s (err %v) has null", raw, err)
	}
	return rep
}

// ranges returns the [from, to) of each partition.
func ranges(ps []sync.PartitionRange) [][2]time.Time {
	out := make([][2]time.Time, len(ps))
	for i, p := range ps {
		out[i] = [2]time.Time{p.From, p.To}
	}
	return out
}

// slots returns n consecutive [from, to) ranges of length d starting at from.
func slots(from time.Time, d time.Duration, n int) [][2]time.Time {
	out := make([][2]time.Time, n)
	for i := range out {
		out[i] = [2]time.Time{from.Add(time.Duration(i) * d), from.Add(time.Duration(i+1) * d)}
	}
	return out
}

// insertAt writes one event row directly, at a chosen time, to place it in a partition.
func insertAt(t *testing.T, e env, seq int64, at time.Time) {
	t.Helper()
	_, err := e.pool.Exec(t.Context(), `INSERT INTO sync.event_log
		(seq, id, type, occurred_at, actor_id, resource_kind, resource_id, receive_action, payload)
		VALUES ($1, $2, 'space.created', $3, $2, 'space', $2, 'space.read', '{}')`, seq, uuid.Must(uuid.NewV7()), at)
	if err != nil {
		t.Fatalf("insert seq %d: %v", seq, err)
	}
}

// partitionOf names the partition holding seq.
func partitionOf(t *testing.T, e env, seq int64) string {
	t.Helper()
	var name string
	if err := e.pool.QueryRow(t.Context(), "SELECT tableoid::regclass::text FROM sync.event_log WHERE seq = $1", seq).Scan(&name); err != nil {
		t.Fatalf("partition of seq %d: %v", seq, err)
	}
	return strings.TrimPrefix(name, "sync.")
}

func (e env) minRetained(t *testing.T) (int64, bool) {
	t.Helper()
	seq, ok, err := e.reader.MinRetainedSeq(t.Context())
	if err != nil {
		t.Fatalf("MinRetainedSeq: %v", err)
	}
	return seq, ok
}

func TestUpkeepCreatesAlignedPartitionsAhead(t *testing.T) {
	t.Parallel()
	now := base.Add(13*time.Hour + 45*time.Minute + 30*time.Second)
	tests := []struct {
		name     string
		interval time.Duration
		ahead    int
		first    time.Time
	}{
		{name: "a UTC day", interval: 24 * time.Hour, ahead: 3, first: base},
		// 5h does not divide a day: slots are counted from the Unix epoch, not from midnight.
		{name: "five hours from the epoch", interval: 5 * time.Hour, ahead: 2, first: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)},
		{name: "a minute", interval: time.Minute, ahead: 1, first: base.Add(13*time.Hour + 45*time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := newPartitions(t, e, tc.interval, tc.ahead, 1000*time.Hour)
			rep := upkeep(t, p, now)
			if want := slots(tc.first, tc.interval, tc.ahead+1); !slices.Equal(ranges(rep.Created), want) {
				t.Errorf("created %v, want %v", ranges(rep.Created), want)
			}
			if tc.first.Unix()%int64(tc.interval.Seconds()) != 0 {
				t.Fatalf("test error: %v is not aligned to %v", tc.first, tc.interval)
			}
			if len(rep.Dropped) != 0 || rep.MovedFromDefault != 0 {
				t.Errorf("dropped %v, moved %d; want nothing", rep.Dropped, rep.MovedFromDefault)
			}
			if again := upkeep(t, p, now); len(again.Created) != 0 {
				t.Errorf("a second run created %v", again.Created)
			}
			later := upkeep(t, p, now.Add(tc.interval))
			if want := slots(tc.first.Add(time.Duration(tc.ahead+1)*tc.interval), tc.interval, 1); !slices.Equal(ranges(later.Created), want) {
				t.Errorf("one interval later created %v, want %v", ranges(later.Created), want)
			}
		})
	}
}

func TestUpkeepMovesRowsOutOfTheDefaultPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// No partition covers the database's clock yet: the events land in the default partition.
	e.commit(t, events("space.created", 3)...)
	e.commit(t, events("agent.created", 2)...)
	before := e.all(t)
	for _, ev := range before {
		if got := partitionOf(t, e, ev.Seq); got != "event_log_default" {
			t.Fatalf("seq %d is in %s, want the default partition", ev.Seq, got)
		}
	}
	// Upkeep with a clock years behind the database's: it still finds a partition for the rows.
	p := newPartitions(t, e, time.Hour, 1, 1_000_000*time.Hour)
	past := time.Date(2020, 1, 1, 12, 30, 0, 0, time.UTC)
	rep := upkeep(t, p, past)
	if rep.MovedFromDefault != 5 {
		t.Errorf("moved %d rows, want 5", rep.MovedFromDefault)
	}
	wantSlot := syncpg.SlotStart(before[0].OccurredAt, time.Hour)
	if !slices.ContainsFunc(rep.Created, func(r sync.PartitionRange) bool { return r.From.Equal(wantSlot) }) {
		t.Errorf("created %v, want also the slot at %v holding the rows", ranges(rep.Created), wantSlot)
	}
	for _, ev := range before {
		if got := partitionOf(t, e, ev.Seq); got == "event_log_default" {
			t.Errorf("seq %d is still in the default partition", ev.Seq)
		}
	}
	after := e.all(t)
	if len(after) != len(before) {
		t.Fatalf("%d events after the move, want %d", len(after), len(before))
	}
	for i := range before {
		if after[i].Seq != before[i].Seq || after[i].ID != before[i].ID || !after[i].OccurredAt.Equal(before[i].OccurredAt) ||
			!jsonEqual(t, after[i].Payload, before[i].Payload) {
			t.Errorf("seq %d changed in the move: %+v, was %+v", before[i].Seq, after[i], before[i])
		}
	}
	// Appends go on, now into the time partition.
	e.commit(t, events("space.created", 1)...)
	if got := partitionOf(t, e, 6); got == "event_log_default" {
		t.Errorf("seq 6 is in the default partition although its slot exists")
	}
	e.checkContiguous(t, 6)
}

func TestRetentionDropsOnlyWholeOldPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPartitions(t, e, time.Hour, 1, 24*time.Hour)
	insertAt(t, e, 1, base.Add(10*time.Minute))
	insertAt(t, e, 2, base.Add(50*time.Minute))
	insertAt(t, e, 3, base.Add(70*time.Minute))
	insertAt(t, e, 4, base.Add(130*time.Minute))
	rep := upkeep(t, p, base.Add(150*time.Minute))
	if want := slots(base, time.Hour, 4); !slices.Equal(ranges(rep.Created), want) {
		t.Errorf("created %v, want %v", ranges(rep.Created), want)
	}
	tests := []struct {
		now         time.Time
		dropped     [][2]time.Time
		lastSeqs    []int64
		horizon     int64
		left        []int64
		minRetained int64
	}{
		// The oldest partition ends one second after the cutoff: not wholly old, kept.
		{now: base.Add(25*time.Hour - time.Second), left: span(1, 4), minRetained: 1},
		// It ends exactly at the cutoff: dropped with its two events.
		{now: base.Add(25 * time.Hour), dropped: slots(base, time.Hour, 1), lastSeqs: []int64{2}, horizon: 2, left: span(3, 4), minRetained: 3},
		// The cutoff halfway through the third partition drops only the second.
		{now: base.Add(26*time.Hour + 30*time.Minute), dropped: slots(base.Add(time.Hour), time.Hour, 1), lastSeqs: []int64{3}, horizon: 3, left: []int64{4}, minRetained: 4},
	}
	for _, tc := range tests {
		rep := upkeep(t, p, tc.now)
		var last []int64
		for _, d := range rep.Dropped {
			last = append(last, d.LastSeq)
		}
		if !slices.Equal(ranges(rep.Dropped), tc.dropped) || !slices.Equal(last, tc.lastSeqs) {
			t.Errorf("at %v: dropped %v with last seqs %v, want %v with %v", tc.now, ranges(rep.Dropped), last, tc.dropped, tc.lastSeqs)
		}
		if rep.HorizonSeq != tc.horizon {
			t.Errorf("at %v: horizon %d, want %d", tc.now, rep.HorizonSeq, tc.horizon)
		}
		if got := seqs(e.all(t)); !slices.Equal(got, tc.left) {
			t.Errorf("at %v: seqs left %v, want %v", tc.now, got, tc.left)
		}
		if seq, ok := e.minRetained(t); seq != tc.minRetained || !ok {
			t.Errorf("at %v: MinRetainedSeq %d, %v; want %d, true", tc.now, seq, ok, tc.minRetained)
		}
	}
}

func TestHorizonCoversASeqDroppedOutOfTimeOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPartitions(t, e, time.Hour, 1, 24*time.Hour)
	// The database's clock went back between seq 1 and seq 2: seq 2 sits in an older partition.
	insertAt(t, e, 1, base.Add(130*time.Minute))
	insertAt(t, e, 2, base.Add(10*time.Minute))
	upkeep(t, p, base.Add(150*time.Minute))
	rep := upkeep(t, p, base.Add(25*time.Hour))
	if rep.HorizonSeq != 2 {
		t.Errorf("horizon %d, want 2", rep.HorizonSeq)
	}
	// min(seq) is 1, but seq 2 is gone: a reader after seq 0 or 1 would miss it.
	if seq, ok := e.minRetained(t); seq != 3 || !ok {
		t.Errorf("MinRetainedSeq %d, %v; want 3, true", seq, ok)
	}
}

func TestRetentionKeepsTheHeadOfAnEmptyLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.commit(t, events("space.created", 3)...)
	appended := e.all(t)[0].OccurredAt
	p := newPartitions(t, e, time.Hour, 1, time.Hour)
	upkeep(t, p, appended)
	later := appended.Add(3 * time.Hour)
	rep := upkeep(t, p, later)
	// Both partitions of the first run are wholly old now: the one with seqs 1..3 and the
	// empty one ahead of it.
	if len(rep.Dropped) != 2 || rep.Dropped[0].LastSeq != 3 || rep.Dropped[1].LastSeq != 0 || rep.HorizonSeq != 3 {
		t.Fatalf("dropped %+v, horizon %d; want the partition of seqs 1..3, the empty one after it and horizon 3", rep.Dropped, rep.HorizonSeq)
	}
	if got := e.all(t); len(got) != 0 {
		t.Errorf("log holds %v, want nothing", seqs(got))
	}
	// Spec 03: the head stays the counter, and MinRetainedSeq of an empty log is HeadSeq + 1.
	if h := e.head(t); h != 3 {
		t.Errorf("event_seq = %d after retention, want 3", h)
	}
	if seq, ok := e.minRetained(t); seq != 4 || ok {
		t.Errorf("MinRetainedSeq %d, %v; want 4, false", seq, ok)
	}
	// Appends continue after the head. The database's clock is behind upkeep's here, so they
	// land in the default partition; nothing is lost, and MinRetainedSeq is their first seq.
	e.commit(t, events("space.created", 2)...)
	if got := seqs(e.all(t)); !slices.Equal(got, span(4, 5)) {
		t.Errorf("seqs %v, want 4..5", got)
	}
	if seq, ok := e.minRetained(t); seq != 4 || !ok {
		t.Errorf("MinRetainedSeq %d, %v; want 4, true", seq, ok)
	}
}

func TestUpkeepAfterAnIntervalChangeNeverOverlaps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		first, then time.Duration
		ahead       int
		firstNow    time.Time
		thenNow     time.Time
		want        [][2]time.Time
	}{
		{
			name: "days then hours", first: 24 * time.Hour, then: time.Hour, ahead: 2,
			firstNow: base.Add(time.Hour), thenNow: base.Add(71 * time.Hour),
			// The day partitions end at base+72h; only the hours after that are new.
			want: slots(base.Add(72*time.Hour), time.Hour, 2),
		},
		{
			name: "hours then days", first: time.Hour, then: 24 * time.Hour, ahead: 1,
			firstNow: base.Add(10 * time.Hour), thenNow: base.Add(10 * time.Hour),
			// Hours 10 and 11 exist; the day around them is filled in on both sides.
			want: [][2]time.Time{{base, base.Add(10 * time.Hour)}, {base.Add(12 * time.Hour), base.Add(24 * time.Hour)}, {base.Add(24 * time.Hour), base.Add(48 * time.Hour)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			upkeep(t, newPartitions(t, e, tc.first, tc.ahead, 1000*time.Hour), tc.firstNow)
			rep := upkeep(t, newPartitions(t, e, tc.then, tc.ahead, 1000*time.Hour), tc.thenNow)
			if !slices.Equal(ranges(rep.Created), tc.want) {
				t.Errorf("created %v, want %v", ranges(rep.Created), tc.want)
			}
		})
	}
}

func TestConcurrentUpkeepsRunOneAfterTheOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPartitions(t, e, time.Hour, 2, 1000*time.Hour)
	errs := make(chan error, 2)
	created := make(chan int, 2)
	for range 2 {
		go func() {
			rep, err := p.Upkeep(context.WithoutCancel(t.Context()), base)
			created <- len(rep.Created)
			errs <- err
		}()
	}
	total := 0
	for range 2 {
		total += <-created
		if err := <-errs; err != nil {
			t.Errorf("Upkeep: %v", err)
		}
	}
	if total != 3 {
		t.Errorf("created %d partitions in all, want 3", total)
	}
}

func TestUpkeepGivesUpOnTheLockTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, err := syncpg.NewPartitions(e.pool, syncpg.PartitionConfig{
		Interval: time.Hour, Ahead: 1, Retention: 1000 * time.Hour, LockTimeout: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("NewPartitions: %v", err)
	}
	// A reader in an open transaction holds a lock on the log that upkeep must wait for.
	reader, err := e.pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := reader.Exec(t.Context(), "SELECT count(*) FROM sync.event_log"); err != nil {
		t.Fatalf("read: %v", err)
	}
	_, err = p.Upkeep(t.Context(), base)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Errorf("Upkeep while the log is locked = %v, want lock_not_available (55P03)", err)
	}
	if err := reader.Rollback(t.Context()); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if rep := upkeep(t, p, base); len(rep.Created) != 2 {
		t.Errorf("after the reader ended: created %v, want 2 partitions", ranges(rep.Created))
	}
}

func TestUpkeepDuringAppendsLosesNothing(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	cfg.MaxConns = 6
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	e := envOn(pool)
	// Events land in the default partition first; the upkeeps below move them out while
	// writers keep appending, and later events land in the partitions they created.
	e.commit(t, events("space.created", 5)...)
	p := newPartitions(t, e, time.Minute, 2, 1000*time.Hour)
	const writers, txs, each = 4, 15, 2
	var wg gosync.WaitGroup
	errs := make([]error, writers+1)
	for w := range writers {
		wg.Go(func() {
			for range txs {
				err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
					return e.appender.Append(ctx, events("agent.created", each)...)
				})
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if _, err := p.Upkeep(t.Context(), time.Now()); err != nil {
				errs[writers] = err
				return
			}
		}
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	upkeep(t, p, time.Now())
	e.checkContiguous(t, 5+writers*txs*each)
	var inDefault int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM sync.event_log_default").Scan(&inDefault); err != nil {
		t.Fatalf("count default: %v", err)
	}
	if inDefault != 0 {
		t.Errorf("%d events left in the default partition after upkeep", inDefault)
	}
}
