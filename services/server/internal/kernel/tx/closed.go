package tx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// closedDB is the DB of a context whose transaction has ended: every statement fails with
// pgx.ErrTxClosed, as pgx's own closed transaction answers, so a context kept too long can
// neither write outside its transaction nor reach the connection's next user.
type closedDB struct{}

var _ DB = closedDB{}

func (closedDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, pgx.ErrTxClosed
}

func (closedDB) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, pgx.ErrTxClosed
}

func (closedDB) QueryRow(context.Context, string, ...any) pgx.Row { return closedRow{} }

func (closedDB) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults { return closedBatch{} }

func (closedDB) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, pgx.ErrTxClosed
}

// closedRow is the row of a closed transaction's QueryRow.
type closedRow struct{}

func (closedRow) Scan(...any) error { return pgx.ErrTxClosed }

// closedBatch is the result of a closed transaction's SendBatch.
type closedBatch struct{}

func (closedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, pgx.ErrTxClosed }

func (closedBatch) Query() (pgx.Rows, error) { return nil, pgx.ErrTxClosed }

func (closedBatch) QueryRow() pgx.Row { return closedRow{} }

func (closedBatch) Close() error { return pgx.ErrTxClosed }

func (closedBatch) Tx() pgx.Tx { return nil }
