package tx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// classifiedPool is the DB of a context without a transaction: the pool, with every error
// passed through Classify, so that an adapter reading outside a transaction reports an
// outage as problem.ErrUnavailable.
type classifiedPool struct {
	db DB
}

var _ DB = classifiedPool{}

func (c classifiedPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := c.db.Exec(ctx, sql, args...)
	return tag, Classify(err)
}

func (c classifiedPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return classifyRows(c.db.Query(ctx, sql, args...))
}

func (c classifiedPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{c.db.QueryRow(ctx, sql, args...)}
}

func (c classifiedPool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return classifiedBatch{c.db.SendBatch(ctx, b)}
}

func (c classifiedPool) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	n, err := c.db.CopyFrom(ctx, table, columns, src)
	return n, Classify(err)
}

// classifiedTx is the DB of a context inside a transaction: the pgx.Tx (it still is one, so
// whoever asks whether it runs in a transaction learns it), its statements' errors passed
// through Classify.
type classifiedTx struct {
	pgx.Tx
}

func (c classifiedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := c.Tx.Exec(ctx, sql, args...)
	return tag, Classify(err)
}

func (c classifiedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return classifyRows(c.Tx.Query(ctx, sql, args...))
}

func (c classifiedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{c.Tx.QueryRow(ctx, sql, args...)}
}

func (c classifiedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return classifiedBatch{c.Tx.SendBatch(ctx, b)}
}

func (c classifiedTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	n, err := c.Tx.CopyFrom(ctx, table, columns, src)
	return n, Classify(err)
}

func classifyRows(rows pgx.Rows, err error) (pgx.Rows, error) {
	if err != nil {
		return rows, Classify(err)
	}
	return classifiedRows{rows}, nil
}

// classifiedRows classifies the errors of a result set: a connection that breaks while rows
// arrive shows up in Err (which pgx.CollectRows and friends return) or in Scan.
type classifiedRows struct {
	pgx.Rows
}

func (r classifiedRows) Err() error { return Classify(r.Rows.Err()) }

func (r classifiedRows) Scan(dest ...any) error { return Classify(r.Rows.Scan(dest...)) }

func (r classifiedRows) Values() ([]any, error) {
	v, err := r.Rows.Values()
	return v, Classify(err)
}

// classifiedRow classifies the error of QueryRow, which Scan reports.
type classifiedRow struct {
	row pgx.Row
}

func (r classifiedRow) Scan(dest ...any) error { return Classify(r.row.Scan(dest...)) }

// classifiedBatch classifies the errors of a batch's results.
type classifiedBatch struct {
	pgx.BatchResults
}

func (b classifiedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, Classify(err)
}

func (b classifiedBatch) Query() (pgx.Rows, error) { return classifyRows(b.BatchResults.Query()) }

func (b classifiedBatch) QueryRow() pgx.Row { return classifiedRow{b.BatchResults.QueryRow()} }

func (b classifiedBatch) Close() error { return Classify(b.BatchResults.Close()) }
