// Package tx runs a use case's writes in one PostgreSQL transaction that the adapters of every
// module join through the context, and gives that transaction a commit phase.
//
// The use case that starts a write opens the transaction with Runner.RunInTx; adapters call
// Runner.DB(ctx) and so write inside it without knowing. Commit-phase hooks (OnCommitPhase)
// run after the use case's function returns, as the transaction's very last statements: a
// row lock taken there, such as the event_seq counter row, is held only until COMMIT, so
// transactions take their sequence numbers in commit order and nobody holds the lock across
// application work (see the counter-row pattern in the data model). Last hooks
// (OnCommitPhaseLast) run after every ordinary hook, so the one that takes the most contended
// lock, the event appender's, comes after all others and locks are always taken in the same
// order. AfterCommit callbacks run once the data is committed, for cache invalidation and
// wake-ups that must not see a rolled-back write. OnEnd functions run when the transaction
// ends whatever the outcome, to give back what a transaction holds in the process (the event
// appender's admission slot). Value keeps per-transaction state, such as the events staged so
// far, for adapters that join the transaction.
package tx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/config"
)

// KeyRollbackTimeout bounds a rollback, which runs even when the caller's context has ended:
// a request that gave up must still give its connection back, but not wait forever on a
// database that does not answer. The composition root reads it (WithRollbackTimeout).
var KeyRollbackTimeout = config.Define("database.rollback_timeout", config.KindDuration, "15s",
	"longest the rollback of a transaction may take once its request has ended or failed (the connection is dropped then); more than 0")

// defaultRollbackTimeout is database.rollback_timeout's default, for runners that read no
// configuration (tools, tests).
var defaultRollbackTimeout = func() time.Duration {
	d, err := time.ParseDuration(KeyRollbackTimeout.Default)
	if err != nil {
		panic("tx: " + KeyRollbackTimeout.Name + " has a bad default: " + err.Error())
	}
	return d
}()

// ErrNoTransaction is returned when a context carries no open transaction: outside RunInTx,
// or after the transaction ended.
var ErrNoTransaction = errors.New("tx: no transaction in context")

// ErrNotInCommitPhase is returned by RequireCommitPhase inside a transaction but outside its
// commit-phase hooks.
var ErrNotInCommitPhase = errors.New("tx: not in the commit phase")

// ErrLastHooksRunning is returned by OnCommitPhase called once the last hooks have started: an
// ordinary hook queued then would run after a last hook and break the lock order last hooks
// exist for.
var ErrLastHooksRunning = errors.New("tx: last commit-phase hooks are running")

// DB is what adapters run statements on: the transaction of the context or the pool. Both
// *pgxpool.Pool and pgx.Tx satisfy it, so an adapter works the same inside or outside a
// caller's transaction.
type DB interface {
	// Exec runs a statement that returns no rows (INSERT, UPDATE, DELETE, DDL).
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
	// Query runs a statement returning rows; the caller closes them (pgx.CollectRows does).
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	// QueryRow runs a statement returning at most one row; Scan reports pgx.ErrNoRows.
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// SendBatch sends several statements in one round trip.
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	// CopyFrom bulk-loads rows with the COPY protocol.
	CopyFrom(ctx context.Context, tableName pgx.Identifier, columnNames []string, rowSrc pgx.CopyFromSource) (int64, error)
}

var (
	_ DB = (*pgxpool.Pool)(nil)
	_ DB = pgx.Tx(nil)
)

// Runner opens transactions on a pool. Every error it returns, and every error of the DB it
// hands out, has passed through Classify: an unreachable database is problem.ErrUnavailable.
type Runner struct {
	pool *pgxpool.Pool
	db   DB // the pool, classified
	// rollbackTimeout is database.rollback_timeout.
	rollbackTimeout time.Duration
}

// NewRunner returns a Runner on pool, with database.rollback_timeout at its default; the
// composition root makes one (WithRollbackTimeout) and hands it to every module.
func NewRunner(pool *pgxpool.Pool) *Runner {
	return &Runner{pool: pool, db: classifiedPool{db: pool}, rollbackTimeout: defaultRollbackTimeout}
}

// WithRollbackTimeout sets database.rollback_timeout; a timeout that is not positive is
// refused, naming the key (a rollback could never run).
func (r *Runner) WithRollbackTimeout(d time.Duration) (*Runner, error) {
	if err := CheckRollbackTimeout(d); err != nil {
		return nil, err
	}
	r.rollbackTimeout = d
	return r, nil
}

// CheckRollbackTimeout refuses a database.rollback_timeout that is not positive, naming the
// key, so the composition root can refuse it before it connects.
func CheckRollbackTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("tx: %s is %v, want more than 0", KeyRollbackTimeout.Name, d)
	}
	return nil
}

type stateKey struct{}

type phaseKey struct{}

// state is one transaction: its hooks, its after-commit callbacks and where it stands. The
// mutex guards registrations from goroutines of fn; the pgx.Tx itself is not safe for
// concurrent use.
type state struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
	db   classifiedTx // tx, its statements' errors classified: what DB hands adapters
	// final is the batch sent together with COMMIT (QueueFinal); nil when no hook queued a statement.
	final *pgx.Batch
	// rollbackTimeout is the runner's database.rollback_timeout.
	rollbackTimeout time.Duration

	mu     sync.Mutex
	hooks  []func(ctx context.Context) error
	last   []func(ctx context.Context) error
	after  []func(ctx context.Context)
	ends   []func(ctx context.Context)
	values map[any]any
	phase  bool // commit-phase hooks are running
	late   bool // the last hooks are running: no ordinary hook may be queued
	done   bool // committed or rolled back: nothing may be registered any more
}

func from(ctx context.Context) *state {
	s, _ := ctx.Value(stateKey{}).(*state)
	return s
}

func (s *state) open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.done
}

// RunInTx runs fn in a READ COMMITTED transaction carried by the context fn receives. After
// fn returns nil, the commit-phase hooks run in registration order (hooks registered by a hook
// run after those already queued), then the last hooks in registration order, then COMMIT,
// then the OnEnd functions, then the AfterCommit callbacks with ctx.
//
// A call inside another RunInTx joins the outer transaction (no savepoint) and returns fn's
// error as is; the outer call decides. Any error from fn, a hook or COMMIT rolls the whole
// transaction back, drops its hooks and callbacks, runs the OnEnd functions, and is returned
// wrapped. A panic in fn or a hook rolls back, runs the OnEnd functions and panics again.
//
// Errors are classified (Classify): a database that cannot be reached, at the begin, in a
// statement or at COMMIT, is problem.ErrUnavailable.
func (r *Runner) RunInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if s := from(ctx); s != nil && s.open() {
		return fn(ctx)
	}
	return Classify(r.runInTx(ctx, fn))
}

func (r *Runner) runInTx(ctx context.Context, fn func(ctx context.Context) error) error {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("tx: begin: %w", err)
	}
	// BEGIN goes out with the first statement (lazyTx).
	pgtx := &lazyTx{conn: conn.Conn()}
	s := &state{conn: conn, tx: pgtx, db: classifiedTx{Tx: pgtx}, rollbackTimeout: r.rollbackTimeout}
	// After a panic's rollback too; a no-op once the OnEnd functions ran.
	defer s.end(ctx)
	after, err := s.run(context.WithValue(ctx, stateKey{}, s), fn)
	s.end(ctx)
	if err != nil {
		return err
	}
	for _, f := range after {
		f(ctx)
	}
	return nil
}

// run executes fn and the hooks and commits, returning the callbacks to run after the commit.
func (s *state) run(ctx context.Context, fn func(ctx context.Context) error) (after []func(context.Context), err error) {
	defer func() {
		if p := recover(); p != nil {
			_ = s.rollback(ctx)
			panic(p)
		}
	}()
	if err := fn(ctx); err != nil {
		return nil, s.fail(ctx, err)
	}
	if err := s.runHooks(ctx); err != nil {
		return nil, s.fail(ctx, err)
	}
	s.mu.Lock()
	s.done = true
	after = s.after
	s.mu.Unlock()
	if err := s.commit(ctx); err != nil {
		// A failed COMMIT ends the transaction; the rollback is for a final batch whose
		// statement failed before its COMMIT ran, which leaves the transaction aborted.
		_ = s.rollback(ctx)
		return nil, fmt.Errorf("tx: commit: %w", err)
	}
	return after, nil
}

// commit sends COMMIT, in one round trip with the final batch when a hook queued one.
func (s *state) commit(ctx context.Context) error {
	if s.final == nil {
		return s.tx.Commit(ctx)
	}
	b := s.final
	s.final = nil
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		// COMMIT of a transaction that failed answers ROLLBACK, as pgx's Tx.Commit checks too.
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	return s.tx.SendBatch(ctx, b).Close()
}

func (s *state) runHooks(ctx context.Context) error {
	s.mu.Lock()
	s.phase = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.phase, s.late = false, false
		s.mu.Unlock()
	}()
	hookCtx := context.WithValue(ctx, phaseKey{}, s)
	if err := s.drain(hookCtx, &s.hooks, "commit-phase hook"); err != nil {
		return err
	}
	s.mu.Lock()
	s.late = true
	s.mu.Unlock()
	return s.drain(hookCtx, &s.last, "last commit-phase hook")
}

// drain runs the hooks of *list in order, including those appended while it runs.
func (s *state) drain(ctx context.Context, list *[]func(context.Context) error, what string) error {
	for i := 0; ; i++ {
		s.mu.Lock()
		if i >= len(*list) {
			s.mu.Unlock()
			return nil
		}
		hook := (*list)[i]
		s.mu.Unlock()
		if err := hook(ctx); err != nil {
			return fmt.Errorf("%s %d: %w", what, i+1, err)
		}
	}
}

// fail rolls back after err and returns err wrapped, with a rollback failure attached.
func (s *state) fail(ctx context.Context, err error) error {
	if rbErr := s.rollback(ctx); rbErr != nil {
		return fmt.Errorf("tx: %w (rollback: %w)", err, rbErr)
	}
	return fmt.Errorf("tx: %w", err)
}

// end runs the OnEnd functions once the transaction has ended (committed or rolled back), in
// registration order, with ctx without its cancellation; later calls do nothing.
func (s *state) end(ctx context.Context) {
	s.mu.Lock()
	ends := s.ends
	s.ends = nil
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		// The pool destroys a connection left inside a transaction instead of reusing it.
		conn.Release()
	}
	if len(ends) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, f := range ends {
		f(ctx)
	}
}

// rollback ends the transaction even when ctx has ended, and discards hooks and callbacks; the
// OnEnd functions stay for end.
func (s *state) rollback(ctx context.Context) error {
	s.mu.Lock()
	s.done, s.hooks, s.last, s.after, s.values, s.final = true, nil, nil, nil, nil, nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.rollbackTimeout)
	defer cancel()
	if err := s.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}

// DB returns the transaction carried by ctx, else the pool, their errors classified
// (Classify). A context kept after its
// transaction ended returns a DB whose statements fail with pgx.ErrTxClosed instead of running
// outside it unnoticed (or on the connection's next user).
func (r *Runner) DB(ctx context.Context) DB {
	if s := from(ctx); s != nil {
		if !s.open() {
			return closedDB{}
		}
		return s.db
	}
	return r.db
}

// QueueFinal queues a statement to be sent together with COMMIT, in one round trip, once every
// commit-phase hook has run. It is for the last hook whose lock every writer of the instance
// waits for (the event appender's event_seq advance): the lock is held from the first queued
// statement to COMMIT, and with COMMIT in the same round trip no network round trip lies inside
// it. Statements run in queue order (last hooks in registration order). No result comes back:
// the only thing that can stop the COMMIT is a statement failing in the server, so a condition
// that must prevent the commit has to make a statement fail (a callback reading a result would
// run after COMMIT was sent, too late). A failed statement fails RunInTx, which rolls back and
// returns the server's error. It returns ErrNoTransaction outside an open transaction and
// ErrNotInCommitPhase outside a last commit-phase hook.
func QueueFinal(ctx context.Context, sql string, args ...any) error {
	if err := RequireCommitPhase(ctx); err != nil {
		return err
	}
	return withOpen(ctx, func(s *state) error {
		if !s.late {
			return ErrNotInCommitPhase
		}
		if s.final == nil {
			s.final = &pgx.Batch{}
		}
		s.final.Queue(sql, args...)
		return nil
	})
}

// withOpen runs fn under the lock of the transaction of ctx while it is open, the one guard
// every registration shares: ErrNoTransaction outside a transaction or once it has ended.
func withOpen(ctx context.Context, fn func(s *state) error) error {
	s := from(ctx)
	if s == nil {
		return ErrNoTransaction
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return ErrNoTransaction
	}
	return fn(s)
}

// OnCommitPhase queues hook to run after the use case's function returns, as the last work
// before COMMIT, with a context for which InCommitPhase is true. An error from hook rolls the
// transaction back. It returns ErrNoTransaction outside an open transaction and
// ErrLastHooksRunning from a last hook (OnCommitPhaseLast).
func OnCommitPhase(ctx context.Context, hook func(ctx context.Context) error) error {
	return withOpen(ctx, func(s *state) error {
		if s.late {
			return ErrLastHooksRunning
		}
		s.hooks = append(s.hooks, hook)
		return nil
	})
}

// OnCommitPhaseLast queues hook to run after every ordinary commit-phase hook, also after
// those queued while the phase runs, and before COMMIT; last hooks run in registration order,
// one queued by a last hook after those already queued. It is for the one hook whose lock every
// writer of the instance waits for (the event appender's event_seq): running it last keeps it
// short and makes every transaction take its locks in the same order (permission_version
// before event_seq), so they cannot deadlock. An error from hook rolls the transaction back.
// It returns ErrNoTransaction outside an open transaction.
func OnCommitPhaseLast(ctx context.Context, hook func(ctx context.Context) error) error {
	return withOpen(ctx, func(s *state) error {
		s.last = append(s.last, hook)
		return nil
	})
}

// Value returns the value stored under key for the transaction of ctx, calling init to create
// it on the first call, so an adapter can keep per-transaction state (the events staged so
// far) without a registry of its own that would outlive the transaction. Nested RunInTx calls
// and commit-phase hooks share their transaction's values; the values are dropped when the
// transaction ends. Use an unexported key type, as for context values. init runs at most once
// per key and transaction, under the transaction's lock, so it must not call this package.
// Value is safe for concurrent use by goroutines of one transaction; it returns
// ErrNoTransaction outside an open transaction.
func Value(ctx context.Context, key any, init func() any) (any, error) {
	var v any
	err := withOpen(ctx, func(s *state) error {
		var ok bool
		if v, ok = s.values[key]; ok {
			return nil
		}
		if s.values == nil {
			s.values = map[any]any{}
		}
		v = init()
		s.values[key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// AfterCommit queues fn to run after a successful COMMIT, in registration order, with the
// context RunInTx was called with (no transaction). It never runs after a rollback. It returns
// ErrNoTransaction outside an open transaction.
func AfterCommit(ctx context.Context, fn func(ctx context.Context)) error {
	return withOpen(ctx, func(s *state) error {
		s.after = append(s.after, fn)
		return nil
	})
}

// OnEnd queues fn to run once when the transaction ends, whatever the outcome: after COMMIT,
// after the rollback that follows an error of fn, of a hook or of COMMIT itself, and after the
// rollback of a panic (before it propagates). It is for what a transaction holds in the process
// rather than in the database, such as the event appender's admission slot, which must be given
// back exactly once however the transaction ends. The functions run in registration order,
// before the AfterCommit callbacks, with the context RunInTx was called with (no transaction)
// stripped of its cancellation, so cleanup runs also when the caller's context has ended. They
// must be short and must not panic. A call from a nested RunInTx, a hook or a goroutine of fn
// queues fn for the outer transaction's end. It returns ErrNoTransaction outside an open
// transaction, also once the transaction has started to COMMIT.
func OnEnd(ctx context.Context, fn func(ctx context.Context)) error {
	return withOpen(ctx, func(s *state) error {
		s.ends = append(s.ends, fn)
		return nil
	})
}

// InCommitPhase reports whether ctx is the context of a commit-phase hook of a transaction
// still running.
func InCommitPhase(ctx context.Context) bool {
	s := from(ctx)
	if s == nil {
		return false
	}
	if p, _ := ctx.Value(phaseKey{}).(*state); p != s {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase && !s.done
}

// RequireCommitPhase guards ports that may only run as the last step of a transaction, such
// as the sequence counters: ErrNoTransaction outside a transaction, ErrNotInCommitPhase
// inside one but outside its commit-phase hooks.
func RequireCommitPhase(ctx context.Context) error {
	s := from(ctx)
	if s == nil || !s.open() {
		return ErrNoTransaction
	}
	if !InCommitPhase(ctx) {
		return ErrNotInCommitPhase
	}
	return nil
}
