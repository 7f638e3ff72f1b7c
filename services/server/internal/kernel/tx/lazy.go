package tx

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// beginSQL opens every transaction of a Runner.
const beginSQL = "begin isolation level read committed"

// errNestedBegin answers Begin on a Runner's transaction: nesting is RunInTx joining the outer
// transaction, never a savepoint.
var errNestedBegin = errors.New("tx: a transaction of the runner does not nest; call RunInTx, which joins it")

// lazyTx is a Runner's transaction on one connection whose BEGIN waits for the first
// statement and goes out in the same round trip with it (a pgx batch: BEGIN, then the
// statement, one Sync). A write path's first statement then costs one round trip instead of
// two, and a transaction that runs no statement costs none. Every round trip is CPU on both
// ends (a write, a read and a wake-up in each process), and on a small machine that CPU, not
// the network, bounds the throughput of posting (docs/benchmarks.md, postMessage).
//
// After the first statement it is an ordinary transaction on the connection, with the
// behaviour of pgx's own (its Commit and Rollback included): a failed COMMIT or ROLLBACK
// closes the connection, so the pool never hands out one left in an unknown state. Like a
// pgx.Tx it is not safe for concurrent use.
type lazyTx struct {
	conn   *pgx.Conn
	begun  bool // BEGIN has been sent
	closed bool // COMMIT or ROLLBACK has been sent
}

var _ pgx.Tx = (*lazyTx)(nil)

// Begin implements pgx.Tx; a Runner's transactions do not nest (RunInTx joins instead).
func (t *lazyTx) Begin(context.Context) (pgx.Tx, error) { return nil, errNestedBegin }

// Commit implements pgx.Tx: COMMIT, or nothing when no statement ran.
func (t *lazyTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if !t.begun {
		return nil
	}
	tag, err := t.conn.Exec(ctx, "commit")
	if err != nil {
		if t.conn.PgConn().TxStatus() != 'I' {
			_ = t.conn.Close(ctx) // the error to return is err
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback implements pgx.Tx: ROLLBACK, or nothing when no statement ran.
func (t *lazyTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if !t.begun {
		return nil
	}
	if _, err := t.conn.Exec(ctx, "rollback"); err != nil {
		_ = t.conn.Close(ctx) // the connection's state is unknown; the pool discards a closed one
		return err
	}
	return nil
}

// CopyFrom implements pgx.Tx; COPY cannot share a batch, so a first COPY sends BEGIN alone.
func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if t.closed {
		return 0, pgx.ErrTxClosed
	}
	if !t.begun {
		t.begun = true
		if _, err := t.conn.Exec(ctx, beginSQL); err != nil {
			return 0, err
		}
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

// SendBatch implements pgx.Tx; a first batch carries BEGIN at its head, its result read here.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return closedBatch{}
	}
	if t.begun {
		return t.conn.SendBatch(ctx, b)
	}
	t.begun = true
	withBegin := &pgx.Batch{}
	withBegin.Queue(beginSQL)
	withBegin.QueuedQueries = append(withBegin.QueuedQueries, b.QueuedQueries...)
	br := t.conn.SendBatch(ctx, withBegin)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return failedBatch{err: err}
	}
	return br
}

// LargeObjects implements pgx.Tx; bothy stores no large objects.
func (t *lazyTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

// Prepare implements pgx.Tx; preparing needs no transaction.
func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	return t.conn.Prepare(ctx, name, sql)
}

// Exec implements pgx.Tx.
func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	if t.begun {
		return t.conn.Exec(ctx, sql, args...)
	}
	br := t.SendBatch(ctx, batchOf(sql, args))
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query implements pgx.Tx; the rows of a first statement close its batch when they close.
func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	if t.begun {
		return t.conn.Query(ctx, sql, args...)
	}
	br := t.SendBatch(ctx, batchOf(sql, args))
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return rows, err
	}
	return &batchRows{Rows: rows, batch: br}, nil
}

// QueryRow implements pgx.Tx.
func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.begun || t.closed {
		if t.closed {
			return closedRow{}
		}
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return firstRow{rows: rows, err: err}
}

// Conn implements pgx.Tx.
func (t *lazyTx) Conn() *pgx.Conn { return t.conn }

// batchOf is a batch of one statement.
func batchOf(sql string, args []any) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return b
}

// batchRows are the rows of a transaction's first statement: closing them, or reading past
// the last, also closes the batch that carried them, so the connection is free again.
type batchRows struct {
	pgx.Rows
	batch  pgx.BatchResults
	closed bool
	err    error // the batch's Close error, reported by Err when the rows have none
}

// Next implements pgx.Rows.
func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.closeBatch()
	return false
}

// Close implements pgx.Rows.
func (r *batchRows) Close() {
	r.Rows.Close()
	r.closeBatch()
}

// Err implements pgx.Rows.
func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

func (r *batchRows) closeBatch() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.batch.Close()
}

// firstRow is QueryRow of a transaction's first statement, with the semantics of pgx's own
// row: the first row scanned, pgx.ErrNoRows when there is none, the rows closed either way.
type firstRow struct {
	rows pgx.Rows
	err  error
}

// Scan implements pgx.Row.
func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	for _, d := range dest {
		if _, ok := d.(*pgtype.DriverBytes); ok {
			return fmt.Errorf("tx: %T is not supported by QueryRow", d)
		}
	}
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// failedBatch is the result of a first batch whose BEGIN failed: every result is that error.
type failedBatch struct{ err error }

func (b failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }

func (b failedBatch) Query() (pgx.Rows, error) { return nil, b.err }

func (b failedBatch) QueryRow() pgx.Row { return firstRow{err: b.err} }

func (b failedBatch) Close() error { return b.err }

func (b failedBatch) Tx() pgx.Tx { return nil }
