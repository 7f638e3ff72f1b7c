package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// admissionEnv is a database with a pool of conns connections and an appender that admits n
// transactions at once into the commit phase.
func admissionEnv(t *testing.T, conns int32, n int) env {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	e := envOn(pool)
	e.appender, err = syncpg.NewAppender(e.runner, e.store, syncpg.AppendConfig{Concurrency: n})
	if err != nil {
		t.Fatalf("NewAppender: %v", err)
	}
	return e
}

// section counts what the admission probe reports: transactions inside the admitted section
// (from getting a slot to giving it back), the most at once, and the totals.
type section struct {
	mu                         sync.Mutex
	in, most                   int
	waited, admitted, released int
}

func (s *section) probe(stage syncpg.AdmissionStage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch stage {
	case syncpg.AdmissionWaiting:
		s.waited++
	case syncpg.AdmissionAdmitted:
		s.admitted++
		s.in++
		s.most = max(s.most, s.in)
	case syncpg.AdmissionReleased:
		s.released++
		s.in--
	}
}

func (s *section) counts() (admitted, released, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitted, s.released, s.most
}

// outcome is one way a transaction that appends events can end.
type outcome struct {
	name string
	// fn appends evs and goes on as the outcome says; cancel cancels the transaction's context.
	fn        func(ctx context.Context, e env, evs []kernel.Event, cancel context.CancelFunc) error
	committed bool
	panics    bool
	wantErr   error // for a failed transaction; nil: any error
	admitted  bool  // the transaction gets an admission slot before it ends
}

// errAbortedTransaction stands for PostgreSQL's in_failed_sql_transaction (25P02) in
// outcome.wantErr: the error of statements sent into a transaction a failed statement aborted.
var errAbortedTransaction = errors.New("in failed sql transaction")

// outcomes are every way a transaction can end, before and after its admission.
var outcomes = []outcome{
	{
		name: "commit",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			return e.appender.Append(ctx, evs...)
		},
		committed: true, admitted: true,
	},
	{
		name: "fn error",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return errBoom
		},
		wantErr: errBoom,
	},
	{
		name: "ordinary hook error",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return tx.OnCommitPhase(ctx, func(context.Context) error { return errBoom })
		},
		wantErr: errBoom,
	},
	{
		name: "context cancelled before admission",
		fn: func(ctx context.Context, e env, evs []kernel.Event, cancel context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return tx.OnCommitPhase(ctx, func(context.Context) error { cancel(); return nil })
		},
		wantErr: context.Canceled,
	},
	{
		name: "the appender's batch fails",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			// A swallowed failure aborts the transaction: the batch fails after admission.
			_, _ = e.runner.DB(ctx).Exec(ctx, "SELECT 1/0")
			return nil
		},
		admitted: true,
	},
	{
		name: "last hook error after the batch",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return tx.OnCommitPhaseLast(ctx, func(context.Context) error { return errBoom })
		},
		wantErr: errBoom, admitted: true,
	},
	{
		name: "commit fails",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			// The last hook swallows a failed statement, so the final round trip meets an
			// aborted transaction and its statements and COMMIT fail in the server.
			return tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error {
				_, _ = e.runner.DB(ctx).Exec(ctx, "SELECT 1/0")
				return nil
			})
		},
		wantErr: errAbortedTransaction, admitted: true,
	},
	{
		name: "context cancelled after admission",
		fn: func(ctx context.Context, e env, evs []kernel.Event, cancel context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return tx.OnCommitPhaseLast(ctx, func(context.Context) error { cancel(); return nil })
		},
		wantErr: context.Canceled, admitted: true,
	},
	{
		name: "panic after admission",
		fn: func(ctx context.Context, e env, evs []kernel.Event, _ context.CancelFunc) error {
			if err := e.appender.Append(ctx, evs...); err != nil {
				return err
			}
			return tx.OnCommitPhaseLast(ctx, func(context.Context) error { panic("Robin tripped over the cable") })
		},
		panics: true, admitted: true,
	},
}

// run runs one transaction of the outcome with its own context and returns its panic, if
// any, and its error.
func (o outcome) run(parent context.Context, e env, evs []kernel.Event) (p any, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	defer func() { p = recover() }()
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error { return o.fn(ctx, e, evs, cancel) })
	return nil, err
}

// check reports how the transaction ended against what the outcome says.
func (o outcome) check(p any, err error) error {
	switch {
	case o.panics:
		if s, _ := p.(string); !strings.Contains(s, "tripped over the cable") {
			return errors.New("the transaction's panic was lost")
		}
	case p != nil:
		return errors.New("the transaction panicked")
	case o.committed && err != nil:
		return err
	case !o.committed && err == nil:
		return errors.New("the transaction committed, want an error")
	case errors.Is(o.wantErr, errAbortedTransaction):
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "25P02" {
			return errors.Join(errors.New("unexpected error, want in_failed_sql_transaction"), err)
		}
	case o.wantErr != nil && !errors.Is(err, o.wantErr):
		return errors.Join(errors.New("unexpected error"), err)
	}
	return nil
}

func TestAppendConcurrencyConfiguration(t *testing.T) {
	t.Parallel()
	env := syncpg.AppendConcurrency.EnvName() + "="
	tests := []struct {
		name    string
		environ []string
		want    int
		valid   bool
	}{
		{name: "default", want: 2, valid: true},
		{name: "one", environ: []string{env + "1"}, want: 1, valid: true},
		{name: "many", environ: []string{env + "16"}, want: 16, valid: true},
		{name: "zero", environ: []string{env + "0"}, want: 0},
		{name: "negative", environ: []string{env + "-1"}, want: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Load("", tc.environ)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			c := syncpg.AppendConfigFrom(cfg)
			if err := cfg.Err(); err != nil {
				t.Fatalf("read: %v", err)
			}
			if c.Concurrency != tc.want {
				t.Errorf("Concurrency = %d, want %d", c.Concurrency, tc.want)
			}
			err = c.Validate()
			if tc.valid != (err == nil) {
				t.Errorf("Validate = %v, want valid %v", err, tc.valid)
			}
			if err != nil && (!errors.Is(err, syncpg.ErrInvalidAppendConfig) || !strings.Contains(err.Error(), syncpg.AppendConcurrency.Name)) {
				t.Errorf("Validate = %v, want ErrInvalidAppendConfig naming %s", err, syncpg.AppendConcurrency.Name)
			}
			if _, err := syncpg.NewAppender(nil, nil, c); tc.valid != (err == nil) || (err != nil && !errors.Is(err, syncpg.ErrInvalidAppendConfig)) {
				t.Errorf("NewAppender = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

func TestAdmissionSlotIsGivenBackWhateverTheOutcome(t *testing.T) {
	t.Parallel()
	for _, o := range outcomes {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			// One slot: a slot kept by mistake would stall the next transaction for good.
			e := admissionEnv(t, 4, 1)
			var s section
			syncpg.SetAdmissionProbe(e.appender, s.probe)
			if err := o.check(o.run(t.Context(), e, events("space.created", 2))); err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
			if n := syncpg.SlotsInUse(e.appender); n != 0 {
				t.Fatalf("%d slots in use after the transaction ended, want 0", n)
			}
			admitted, released, _ := s.counts()
			if want := map[bool]int{true: 1}[o.admitted]; admitted != want || released != want {
				t.Errorf("admitted %d, released %d; want %d and %d", admitted, released, want, want)
			}
			head := map[bool]int64{true: 2}[o.committed]
			e.checkContiguous(t, head)
			e.commit(t, events("agent.created", 1)...)
			e.checkContiguous(t, head+1)
		})
	}
}

func TestAdmissionWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	e := admissionEnv(t, 4, 1)
	var s section
	stages := make(chan syncpg.AdmissionStage, 16)
	syncpg.SetAdmissionProbe(e.appender, func(stage syncpg.AdmissionStage) {
		s.probe(stage)
		stages <- stage
	})
	next := func(want syncpg.AdmissionStage) {
		t.Helper()
		if got := <-stages; got != want {
			t.Fatalf("admission stage %v, want %v", got, want)
		}
	}

	// Alex's transaction takes the one slot and keeps it until hold closes (at the latest when
	// the test ends, before its pool closes).
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	alex := make(chan error, 1)
	go func() {
		alex <- e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
			if err := e.appender.Append(ctx, events("space.created", 3)...); err != nil {
				return err
			}
			return tx.OnCommitPhaseLast(ctx, func(context.Context) error { <-hold; return nil })
		})
	}()
	next(syncpg.AdmissionWaiting)
	next(syncpg.AdmissionAdmitted)

	// Sam's transaction waits for the slot until its context ends.
	samCtx, cancelSam := context.WithCancel(t.Context())
	defer cancelSam()
	sam := make(chan error, 1)
	go func() {
		sam <- e.runner.RunInTx(samCtx, func(ctx context.Context) error {
			return e.appender.Append(ctx, events("agent.created", 2)...)
		})
	}()
	next(syncpg.AdmissionWaiting)
	cancelSam()
	if err := <-sam; !errors.Is(err, context.Canceled) {
		t.Errorf("Sam's transaction = %v, want context.Canceled", err)
	}
	if n := syncpg.SlotsInUse(e.appender); n != 1 {
		t.Errorf("%d slots in use while Alex holds the only one, want 1", n)
	}

	release()
	if err := <-alex; err != nil {
		t.Fatalf("Alex's transaction: %v", err)
	}
	next(syncpg.AdmissionReleased)
	if n := syncpg.SlotsInUse(e.appender); n != 0 {
		t.Errorf("%d slots in use at the end, want 0", n)
	}
	if admitted, released, _ := s.counts(); admitted != 1 || released != 1 {
		t.Errorf("admitted %d, released %d; want 1 and 1 (Sam was never admitted)", admitted, released)
	}
	e.checkContiguous(t, 3)
}

func TestAdmissionAdmitsAtMostNIntoTheLockedSection(t *testing.T) {
	t.Parallel()
	const slots, writers, each = 2, 6, 3
	e := admissionEnv(t, writers+1, slots)
	var s section
	waiting := make(chan struct{}, writers)
	admitted := make(chan struct{}, writers)
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(open)
	syncpg.SetAdmissionProbe(e.appender, func(stage syncpg.AdmissionStage) {
		s.probe(stage)
		switch stage {
		case syncpg.AdmissionWaiting:
			waiting <- struct{}{}
		case syncpg.AdmissionAdmitted:
			admitted <- struct{}{}
			<-gate // hold the slot, before the batch, until every writer is waiting
		case syncpg.AdmissionReleased:
		}
	})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			errs[w] = e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
				return e.appender.Append(ctx, events("space.created", each)...)
			})
		})
	}
	for range writers {
		<-waiting
	}
	for range slots {
		<-admitted
	}
	// Every writer is in its commit phase; two hold a slot and the rest wait in the process.
	if n := syncpg.SlotsInUse(e.appender); n != slots {
		t.Errorf("%d slots in use with every writer waiting, want %d", n, slots)
	}
	open()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got, released, most := s.counts(); most != slots || got != writers || released != writers {
		t.Errorf("at most %d in the section at once, %d admitted, %d released; want %d, %d, %d", most, got, released, slots, writers, writers)
	}
	if n := syncpg.SlotsInUse(e.appender); n != 0 {
		t.Errorf("%d slots in use at the end, want 0", n)
	}
	e.checkContiguous(t, writers*each)
}

// The shape of the admission stress test: many more writers than slots, every outcome.
const (
	stressSlots     = 2
	stressWriters   = 16
	stressTxPerWrtr = 25
	stressDeadline  = time.Minute // far above the second or so a run takes under -race
)

// TestAdmissionStress runs many writers through few slots, each transaction ending in a random
// outcome (commit, errors before and after admission, cancellation, a failed COMMIT, a
// panic): never more than stressSlots are admitted at once, every slot is given back, and the
// log holds exactly the committed events.
func TestAdmissionStress(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		parsed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", seedEnv, err)
		}
		seed = parsed
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)
	e := admissionEnv(t, stressWriters+1, stressSlots)
	var s section
	syncpg.SetAdmissionProbe(e.appender, s.probe)
	// A slot that is never given back stalls every writer: the deadline turns that into
	// failed transactions instead of a test that hangs.
	ctx, cancel := context.WithTimeout(t.Context(), stressDeadline)
	defer cancel()

	committed := make([]int, stressWriters)
	errs := make([]error, stressWriters)
	var wg sync.WaitGroup
	for w := range stressWriters {
		rng := rand.New(rand.NewPCG(seed, uint64(w))) //nolint:gosec // G404: a seeded, replayable test schedule, not a secret
		wg.Go(func() {
			for range stressTxPerWrtr {
				o := outcomes[rng.IntN(len(outcomes))]
				n := 1 + rng.IntN(3)
				if err := o.check(o.run(ctx, e, events("space.created", n))); err != nil {
					errs[w] = errors.Join(errors.New(o.name), err)
					return
				}
				if o.committed {
					committed[w] += n
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	admitted, released, most := s.counts()
	if most > stressSlots {
		t.Errorf("%d transactions admitted at once, want at most %d", most, stressSlots)
	}
	if admitted != released || admitted == 0 {
		t.Errorf("admitted %d, released %d; want equal and not 0", admitted, released)
	}
	if n := syncpg.SlotsInUse(e.appender); n != 0 {
		t.Errorf("%d slots in use at the end, want 0", n)
	}
	total := 0
	for _, n := range committed {
		total += n
	}
	e.checkContiguous(t, int64(total))
}
