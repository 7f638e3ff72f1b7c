package postgres_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

var errBoom = errors.New("boom")

// waitTimeout bounds every wait on another goroutine, so a broken test fails instead of hanging.
const waitTimeout = 30 * time.Second

type env struct {
	pool   *pgxpool.Pool
	runner *tx.Runner
	store  *instancepg.Store
}

func setup(t *testing.T) env {
	t.Helper()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	return env{pool: pool, runner: runner, store: instancepg.New(runner)}
}

// setupPool is setup on a pool of maxConns connections, for tests that need more concurrent
// transactions than pgtest.New's pool allows, or one connection to be reused for certain.
func setupPool(t *testing.T, maxConns int32) env {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	runner := tx.NewRunner(pool)
	return env{pool: pool, runner: runner, store: instancepg.New(runner)}
}

// inCommitPhase runs hook as the commit-phase hook of a fresh transaction.
func (e env) inCommitPhase(ctx context.Context, hook func(ctx context.Context) error) error {
	return e.runner.RunInTx(ctx, func(ctx context.Context) error {
		return tx.OnCommitPhase(ctx, hook)
	})
}

// inLastPhase runs hook as the last commit-phase hook of a fresh transaction, where statements
// sent with COMMIT may be queued.
func (e env) inLastPhase(ctx context.Context, hook func(ctx context.Context) error) error {
	return e.runner.RunInTx(ctx, func(ctx context.Context) error {
		return tx.OnCommitPhaseLast(ctx, hook)
	})
}

// advance commits a transaction advancing event_seq by n and returns the last seq.
func (e env) advance(t *testing.T, n int) int64 {
	t.Helper()
	var last int64
	err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		var err error
		last, err = e.store.AdvanceEventSeq(ctx, n)
		return err
	})
	if err != nil {
		t.Fatalf("advance event_seq by %d: %v", n, err)
	}
	return last
}

func (e env) eventSeq(t *testing.T) int64 {
	t.Helper()
	v, err := e.store.EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return v
}

func (e env) rows(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM instance.instance").Scan(&n); err != nil {
		t.Fatalf("count instance rows: %v", err)
	}
	return n
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	set := instancepg.Migrations()
	if set.Schema != "instance" {
		t.Fatalf("schema = %q, want instance", set.Schema)
	}
	names, err := fs.Glob(set.FS, "*.sql")
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	want := []string{"0001_create_instance.sql", "0002_create_sequence_counters.sql", "0003_create_feature_flags.sql", "0004_create_idempotency_keys.sql", "0005_create_restores.sql", "0006_create_cluster_identity.sql"}
	if !slices.Equal(names, want) {
		t.Fatalf("files = %v, want %v", names, want)
	}
}

func TestMigratedCountersStartAtZero(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rows, err := e.pool.Query(t.Context(), "SELECT name, value FROM instance.sequence_counters ORDER BY name")
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	type counter struct {
		Name  string
		Value int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[counter])
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	want := []counter{{"event_seq", 0}, {"permission_version", 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("counters = %v, want %v", got, want)
	}
}

func TestEnsureCreatesTheRowOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	before := time.Now()
	first, err := e.store.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if first.ID.Version() != 7 || first.SyncEpoch.Version() != 7 {
		t.Fatalf("id %s, sync epoch %s: want UUIDv7", first.ID, first.SyncEpoch)
	}
	if first.ID == first.SyncEpoch {
		t.Fatal("id and sync epoch are the same uuid")
	}
	if first.Name != "bothy" || first.Version != 1 {
		t.Fatalf("name %q version %d, want bothy and 1", first.Name, first.Version)
	}
	if first.CreatedAt.Location() != time.UTC || first.CreatedAt.Before(before.Add(-time.Minute)) {
		t.Fatalf("created_at = %v, want a recent UTC time", first.CreatedAt)
	}

	again, err := e.store.Ensure(t.Context(), "renamed")
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if again != first {
		t.Fatalf("second Ensure = %+v, want the first instance %+v unchanged", again, first)
	}
	if n := e.rows(t); n != 1 {
		t.Fatalf("%d instance rows, want 1", n)
	}
	info, err := e.store.Info(t.Context())
	if err != nil || info != first {
		t.Fatalf("Info = %+v, %v; want %+v", info, err, first)
	}
}

func TestEnsureConcurrentCreatesOneRow(t *testing.T) {
	t.Parallel()
	e := setupPool(t, 8)
	const callers = 8
	infos := make([]instance.Info, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			infos[i], errs[i] = e.store.Ensure(t.Context(), "bothy")
		})
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if infos[i] != infos[0] {
			t.Fatalf("caller %d got %+v, caller 0 got %+v", i, infos[i], infos[0])
		}
	}
	if n := e.rows(t); n != 1 {
		t.Fatalf("%d instance rows, want 1", n)
	}
}

func TestEnsureInCallersTransaction(t *testing.T) {
	t.Parallel()
	e := setup(t)
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if _, err := e.store.Ensure(ctx, "bothy"); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want %v", err, errBoom)
	}
	if n := e.rows(t); n != 0 {
		t.Fatalf("%d instance rows after rollback, want 0", n)
	}
}

func TestEnsureRejectsEmptyName(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, name := range []string{"", "  "} {
		if _, err := e.store.Ensure(t.Context(), name); !errors.Is(err, instance.ErrInvalidName) {
			t.Fatalf("Ensure(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	if n := e.rows(t); n != 0 {
		t.Fatalf("%d instance rows, want 0", n)
	}
}

func TestSecondInstanceRowIsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.store.Ensure(t.Context(), "bothy"); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	_, err := e.pool.Exec(t.Context(),
		"INSERT INTO instance.instance (id, name, sync_epoch) VALUES ($1, 'second', $2)", uuid.New(), uuid.New())
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("second INSERT = %v, want unique violation 23505", err)
	}
}

func TestVersionsBeforeEnsure(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.store.SyncEpoch(t.Context()); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("SyncEpoch = %v, want ErrNoInstance", err)
	}
	if _, err := e.store.Info(t.Context()); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("Info = %v, want ErrNoInstance", err)
	}
	if v := e.eventSeq(t); v != 0 {
		t.Fatalf("EventSeq = %d, want 0", v)
	}
	if v, err := e.store.PermissionVersion(t.Context()); err != nil || v != 0 {
		t.Fatalf("PermissionVersion = %d, %v; want 0", v, err)
	}
}

func TestVersionsReadCommittedValues(t *testing.T) {
	t.Parallel()
	e := setup(t)
	info, err := e.store.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	epoch, err := e.store.SyncEpoch(t.Context())
	if err != nil || epoch != info.SyncEpoch {
		t.Fatalf("SyncEpoch = %s, %v; want %s", epoch, err, info.SyncEpoch)
	}
	e.advance(t, 3)
	err = e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		_, err := e.store.AdvancePermissionVersion(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("advance permission_version: %v", err)
	}
	if v := e.eventSeq(t); v != 3 {
		t.Fatalf("EventSeq = %d, want 3", v)
	}
	if v, err := e.store.PermissionVersion(t.Context()); err != nil || v != 1 {
		t.Fatalf("PermissionVersion = %d, %v; want 1", v, err)
	}
}

// TestQueuedVersionsReadWhatVersionsRead: the reads queued on one batch (QueueEventSeq,
// QueueSyncEpoch, QueuePermissionVersion) hand over exactly what EventSeq, SyncEpoch and
// PermissionVersion return; before Ensure, the epoch's read fails the batch with
// ErrNoInstance.
func TestQueuedVersionsReadWhatVersionsRead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	queued := func() (int64, uuid.UUID, int64, error) {
		var (
			head, pv int64
			epoch    uuid.UUID
		)
		b := &pgx.Batch{}
		e.store.QueueEventSeq(b, func(v int64) { head = v })
		e.store.QueueSyncEpoch(b, func(v uuid.UUID) { epoch = v })
		e.store.QueuePermissionVersion(b, func(v int64) { pv = v })
		err := e.pool.SendBatch(t.Context(), b).Close()
		return head, epoch, pv, err
	}
	if _, _, _, err := queued(); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("before Ensure: %v, want ErrNoInstance", err)
	}
	info, err := e.store.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	e.advance(t, 5)
	for range 2 {
		err = e.inCommitPhase(t.Context(), func(ctx context.Context) error {
			_, err := e.store.AdvancePermissionVersion(ctx)
			return err
		})
		if err != nil {
			t.Fatalf("advance permission_version: %v", err)
		}
	}
	head, epoch, pv, err := queued()
	if err != nil || head != 5 || epoch != info.SyncEpoch || pv != 2 {
		t.Fatalf("queued reads = %d, %s, %d, %v; want 5, %s, 2", head, epoch, pv, err, info.SyncEpoch)
	}
}

// TestVersionsDoNotWaitForTheCounterLock holds the event_seq row lock in a transaction that has
// not committed and reads through Versions meanwhile: the read returns the committed value at
// once, and the new value only after the COMMIT.
func TestVersionsDoNotWaitForTheCounterLock(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.advance(t, 2)

	locked := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- e.inCommitPhase(context.Background(), func(ctx context.Context) error {
			if _, err := e.store.AdvanceEventSeq(ctx, 5); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-done:
		t.Fatalf("writer ended early: %v", err)
	case <-time.After(waitTimeout):
		t.Fatal("writer did not take the lock")
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	v, err := e.store.EventSeq(ctx)
	cancel()
	close(release)
	if err != nil || v != 2 {
		t.Fatalf("EventSeq during the writer's commit phase = %d, %v; want 2 at once", v, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("writer: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("writer did not finish")
	}
	if v := e.eventSeq(t); v != 7 {
		t.Fatalf("EventSeq after commit = %d, want 7", v)
	}
}

func TestVersionsInsideTransactionSeeItsOwnAdvance(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var inside int64
	err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		if _, err := e.store.AdvanceEventSeq(ctx, 4); err != nil {
			return err
		}
		var err error
		inside, err = e.store.EventSeq(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("tx: %v", err)
	}
	if inside != 4 {
		t.Fatalf("EventSeq inside the advancing transaction = %d, want 4", inside)
	}
}

// counterCalls are the Counters methods, each reduced to "call it once".
func counterCalls(store *instancepg.Store) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"QueueAdvanceEventSeq": func(ctx context.Context) error {
			return store.QueueAdvanceEventSeq(ctx, 1)
		},
		"AdvanceEventSeq": func(ctx context.Context) error {
			_, err := store.AdvanceEventSeq(ctx, 1)
			return err
		},
		"AdvancePermissionVersion": func(ctx context.Context) error {
			_, err := store.AdvancePermissionVersion(ctx)
			return err
		},
	}
}

func TestCountersRefuseOutsideTheCommitPhase(t *testing.T) {
	t.Parallel()
	e := setup(t)
	places := []struct {
		name string
		run  func(ctx context.Context, call func(context.Context) error) error
		want error
	}{
		{
			name: "outside any transaction",
			run: func(ctx context.Context, call func(context.Context) error) error {
				return call(ctx)
			},
			want: tx.ErrNoTransaction,
		},
		{
			name: "in the RunInTx body",
			run: func(ctx context.Context, call func(context.Context) error) error {
				var callErr error
				err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
					callErr = call(ctx)
					return nil
				})
				if err != nil {
					return err
				}
				return callErr
			},
			want: tx.ErrNotInCommitPhase,
		},
		{
			name: "in an AfterCommit callback",
			run: func(ctx context.Context, call func(context.Context) error) error {
				var callErr error
				err := e.runner.RunInTx(ctx, func(ctx context.Context) error {
					return tx.AfterCommit(ctx, func(ctx context.Context) { callErr = call(ctx) })
				})
				if err != nil {
					return err
				}
				return callErr
			},
			want: tx.ErrNoTransaction,
		},
		{
			name: "with a hook's context kept after the commit",
			run: func(ctx context.Context, call func(context.Context) error) error {
				var kept context.Context
				if err := e.inCommitPhase(ctx, func(ctx context.Context) error {
					kept = ctx
					return nil
				}); err != nil {
					return err
				}
				return call(kept)
			},
			want: tx.ErrNoTransaction,
		},
	}
	for _, p := range places {
		for method, call := range counterCalls(e.store) {
			t.Run(p.name+"/"+method, func(t *testing.T) {
				t.Parallel()
				if err := p.run(t.Context(), call); !errors.Is(err, p.want) {
					t.Fatalf("%s = %v, want %v", method, err, p.want)
				}
			})
		}
	}
	t.Cleanup(func() {
		// Nothing advanced: every refused call left the counters at 0.
		for name, read := range map[string]func(context.Context) (int64, error){
			"event_seq": e.store.EventSeq, "permission_version": e.store.PermissionVersion,
		} {
			if v, err := read(context.Background()); err != nil || v != 0 {
				t.Errorf("%s = %d, %v after refused calls; want 0", name, v, err)
			}
		}
	})
}

func TestAdvanceEventSeqRefusesCountsBelowOne(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, n := range []int{0, -1} {
		err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
			_, err := e.store.AdvanceEventSeq(ctx, n)
			return err
		})
		if !errors.Is(err, instance.ErrInvalidCount) {
			t.Fatalf("AdvanceEventSeq(%d) = %v, want ErrInvalidCount", n, err)
		}
		err = e.inLastPhase(t.Context(), func(ctx context.Context) error {
			return e.store.QueueAdvanceEventSeq(ctx, n)
		})
		if !errors.Is(err, instance.ErrInvalidCount) {
			t.Fatalf("QueueAdvanceEventSeq(%d) = %v, want ErrInvalidCount", n, err)
		}
	}
	if v := e.eventSeq(t); v != 0 {
		t.Fatalf("EventSeq = %d, want 0", v)
	}
}

// TestQueueAdvanceEventSeqSentWithCommit is the appender's use: the advance and the statements
// that need its value are sent with COMMIT, the later ones reading bothy.event_seq. Each check
// divides by whether the published value is the expected one, so a wrong value fails the
// statement, and with it the commit.
func TestQueueAdvanceEventSeqSentWithCommit(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		n        int
		wantLast int64
	}{
		{n: 3, wantLast: 3},
		{n: 1, wantLast: 4},
		{n: 10, wantLast: 14},
	}
	for _, tt := range tests {
		err := e.inLastPhase(t.Context(), func(ctx context.Context) error {
			if err := e.store.QueueAdvanceEventSeq(ctx, tt.n); err != nil {
				return err
			}
			return tx.QueueFinal(ctx, "SELECT 1 / (current_setting('"+instance.EventSeqSetting+"')::bigint = $1)::int", tt.wantLast)
		})
		if err != nil {
			t.Fatalf("advance by %d: %v", tt.n, err)
		}
		if v := e.eventSeq(t); v != tt.wantLast {
			t.Fatalf("EventSeq after advancing by %d = %d, want %d", tt.n, v, tt.wantLast)
		}
	}
	// The check itself can fail: a wrong expectation rolls the advance back.
	err := e.inLastPhase(t.Context(), func(ctx context.Context) error {
		if err := e.store.QueueAdvanceEventSeq(ctx, 1); err != nil {
			return err
		}
		return tx.QueueFinal(ctx, "SELECT 1 / (current_setting('"+instance.EventSeqSetting+"')::bigint = $1)::int", int64(99))
	})
	if err == nil {
		t.Fatal("a failing final check committed")
	}
	if v := e.eventSeq(t); v != 14 {
		t.Fatalf("EventSeq = %d, want 14", v)
	}
}

// TestQueueAdvanceEventSeqOnlyInLastHooks: the advance is sent with COMMIT, so only a last hook,
// after which nothing but COMMIT follows, may queue it.
func TestQueueAdvanceEventSeqOnlyInLastHooks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		return e.store.QueueAdvanceEventSeq(ctx, 2)
	})
	if !errors.Is(err, tx.ErrNotInCommitPhase) {
		t.Fatalf("QueueAdvanceEventSeq in an ordinary hook = %v, want ErrNotInCommitPhase", err)
	}
	if v := e.eventSeq(t); v != 0 {
		t.Fatalf("EventSeq = %d, want 0", v)
	}
}

func TestAdvanceEventSeqPublishesTheSetting(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.advance(t, 5)
	var last int64
	var published string
	err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		var err error
		if last, err = e.store.AdvanceEventSeq(ctx, 2); err != nil {
			return err
		}
		return e.runner.DB(ctx).QueryRow(ctx, "SELECT current_setting('"+instance.EventSeqSetting+"')").Scan(&published)
	})
	if err != nil {
		t.Fatalf("tx: %v", err)
	}
	if last != 7 || published != "7" {
		t.Fatalf("last %d, published %q; want 7 and \"7\"", last, published)
	}
}

// TestEventSeqSettingEndsWithTheTransaction reuses one connection: the next transaction on it
// does not see the previous one's bothy.event_seq.
func TestEventSeqSettingEndsWithTheTransaction(t *testing.T) {
	t.Parallel()
	e := setupPool(t, 1)
	e.advance(t, 1)
	var after string
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		return e.runner.DB(ctx).QueryRow(ctx,
			"SELECT coalesce(current_setting('"+instance.EventSeqSetting+"', true), '')").Scan(&after)
	})
	if err != nil {
		t.Fatalf("tx: %v", err)
	}
	if after != "" {
		t.Fatalf("bothy.event_seq in the next transaction = %q, want unset", after)
	}
}

// TestConcurrentAdvancesGiveDisjointContiguousRanges runs many transactions advancing event_seq
// at once, by different counts and through both methods: their ranges tile 1..total exactly.
func TestConcurrentAdvancesGiveDisjointContiguousRanges(t *testing.T) {
	t.Parallel()
	e := setupPool(t, 8)
	const writers = 32
	type span struct{ first, last int64 }
	spans := make([]span, writers)
	errs := make([]error, writers)
	var total int64
	var wg sync.WaitGroup
	for i := range writers {
		n := i%5 + 1
		total += int64(n)
		wg.Go(func() {
			errs[i] = e.inCommitPhase(context.Background(), func(ctx context.Context) error {
				var last int64
				if i%2 == 0 {
					var err error
					if last, err = e.store.AdvanceEventSeq(ctx, n); err != nil {
						return err
					}
				} else {
					// Read the value it will publish, in the same round trip as the advance:
					// the advance of a transaction that holds the lock already.
					if _, err := e.store.AdvanceEventSeq(ctx, n); err != nil {
						return err
					}
					if err := e.runner.DB(ctx).QueryRow(ctx, "SELECT current_setting('"+instance.EventSeqSetting+"')::bigint").Scan(&last); err != nil {
						return err
					}
				}
				spans[i] = span{last - int64(n) + 1, last}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.first - b.first) })
	next := int64(1)
	for _, s := range spans {
		if s.first != next {
			t.Fatalf("range %d..%d follows %d: want it to start at %d (ranges %v)", s.first, s.last, next-1, next, spans)
		}
		next = s.last + 1
	}
	if next-1 != total {
		t.Fatalf("ranges end at %d, want %d", next-1, total)
	}
	if v := e.eventSeq(t); v != total {
		t.Fatalf("EventSeq = %d, want %d", v, total)
	}
}

func TestRolledBackAdvanceIsNotVisible(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.advance(t, 2)
	tests := []struct {
		name string
		body func(ctx context.Context) error
	}{
		{
			name: "a later hook fails",
			body: func(ctx context.Context) error {
				if err := tx.OnCommitPhase(ctx, func(ctx context.Context) error {
					_, err := e.store.AdvanceEventSeq(ctx, 3)
					return err
				}); err != nil {
					return err
				}
				return tx.OnCommitPhase(ctx, func(context.Context) error { return errBoom })
			},
		},
		{
			name: "the advancing hook fails after its advance",
			body: func(ctx context.Context) error {
				return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
					if _, err := e.store.AdvanceEventSeq(ctx, 4); err != nil {
						return err
					}
					return errBoom
				})
			},
		},
	}
	for _, tt := range tests {
		if err := e.runner.RunInTx(t.Context(), tt.body); !errors.Is(err, errBoom) {
			t.Fatalf("%s: RunInTx = %v, want %v", tt.name, err, errBoom)
		}
		if v := e.eventSeq(t); v != 2 {
			t.Fatalf("%s: EventSeq = %d after rollback, want 2", tt.name, v)
		}
	}
	if last := e.advance(t, 1); last != 3 {
		t.Fatalf("next advance = %d, want 3: a rolled-back advance consumed seqs", last)
	}
}

func TestAdvancePermissionVersion(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var got []int64
	for range 2 {
		err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
			v, err := e.store.AdvancePermissionVersion(ctx)
			got = append(got, v)
			return err
		})
		if err != nil {
			t.Fatalf("advance: %v", err)
		}
	}
	if !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("versions = %v, want [1 2]", got)
	}
}

func TestCounterLockOrder(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// permission_version first, then event_seq: the rule.
	err := e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		if _, err := e.store.AdvancePermissionVersion(ctx); err != nil {
			return err
		}
		_, err := e.store.AdvanceEventSeq(ctx, 1)
		return err
	})
	if err != nil {
		t.Fatalf("permission_version then event_seq: %v", err)
	}
	// event_seq first: refused, and the whole transaction rolls back.
	err = e.inCommitPhase(t.Context(), func(ctx context.Context) error {
		if _, err := e.store.AdvanceEventSeq(ctx, 1); err != nil {
			return err
		}
		_, err := e.store.AdvancePermissionVersion(ctx)
		return err
	})
	if !errors.Is(err, instance.ErrLockOrder) {
		t.Fatalf("event_seq then permission_version = %v, want ErrLockOrder", err)
	}
	if v, err := e.store.PermissionVersion(t.Context()); err != nil || v != 1 {
		t.Fatalf("PermissionVersion = %d, %v; want 1", v, err)
	}
	if v := e.eventSeq(t); v != 1 {
		t.Fatalf("EventSeq = %d, want 1", v)
	}
}

func TestMissingCounterRow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.pool.Exec(t.Context(), "DELETE FROM instance.sequence_counters"); err != nil {
		t.Fatalf("delete counters: %v", err)
	}
	calls := map[string]func(ctx context.Context) error{
		"EventSeq": func(ctx context.Context) error {
			_, err := e.store.EventSeq(ctx)
			return err
		},
		"PermissionVersion": func(ctx context.Context) error {
			_, err := e.store.PermissionVersion(ctx)
			return err
		},
		"AdvanceEventSeq": func(ctx context.Context) error {
			return e.inCommitPhase(ctx, func(ctx context.Context) error {
				_, err := e.store.AdvanceEventSeq(ctx, 1)
				return err
			})
		},
		"AdvancePermissionVersion": func(ctx context.Context) error {
			return e.inCommitPhase(ctx, func(ctx context.Context) error {
				_, err := e.store.AdvancePermissionVersion(ctx)
				return err
			})
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := call(t.Context()); !errors.Is(err, instance.ErrCounterMissing) {
				t.Fatalf("%s = %v, want ErrCounterMissing", name, err)
			}
		})
	}
}

// TestMissingCounterRowFailsTheQueuedAdvance: without the counter row the queued advance
// publishes nothing, so the statement after it that reads bothy.event_seq fails in the server
// and the transaction does not commit.
func TestMissingCounterRowFailsTheQueuedAdvance(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if _, err := e.pool.Exec(t.Context(), "DELETE FROM instance.sequence_counters"); err != nil {
		t.Fatalf("delete counters: %v", err)
	}
	committed := false
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := tx.AfterCommit(ctx, func(context.Context) { committed = true }); err != nil {
			return err
		}
		return tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error {
			if err := e.store.QueueAdvanceEventSeq(ctx, 1); err != nil {
				return err
			}
			return tx.QueueFinal(ctx, "SELECT current_setting('"+instance.EventSeqSetting+"')::bigint")
		})
	})
	if err == nil || committed {
		t.Fatalf("RunInTx = %v (committed %v), want a failed commit", err, committed)
	}
}

func TestDatabaseErrorsAreWrapped(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.store.EventSeq(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("EventSeq on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := e.store.SyncEpoch(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncEpoch on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := e.store.Ensure(ctx, "bothy"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ensure on a cancelled context = %v, want context.Canceled", err)
	}
}
