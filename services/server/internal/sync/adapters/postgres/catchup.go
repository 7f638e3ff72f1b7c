package postgres

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/sync/domain"
)

// catchUpPage is one catch-up page's read (spec 03's prefilter over one scan window).
//
//go:embed queries/catchup_page.sql
var catchUpPage string

// CatchUpPage returns the rows of one catch-up page: at most q.Limit events with q.After <
// seq <= q.Through that pass q.Filter (the SQL of domain.Prefilter.Match), in seq order, and
// the retention horizon. The rows live in memory the reader reuses once the caller calls
// their Release (domain.PageRows). Both statements go in one round trip, the horizon read after the
// rows: a partition drop takes the log's exclusive lock, so it either committed before the
// rows were read (and the horizon shows it) or waits until they were. A caller whose cursor
// is below the returned horizon may have missed dropped events and must resync.
// ErrInvalidLimit for q.Limit < 1; database errors are wrapped.
func (r *Reader) CatchUpPage(ctx context.Context, q domain.PageQuery) (domain.PageRows, error) {
	if q.Limit < 1 {
		return domain.PageRows{}, fmt.Errorf("sync: catch-up page after %d: %w (got %d)", q.After, ErrInvalidLimit, q.Limit)
	}
	rows, err := r.catchUpPage(ctx, q)
	if err != nil {
		return domain.PageRows{}, fmt.Errorf("sync: catch-up page after %d: %w", q.After, err)
	}
	return rows, nil
}

func (r *Reader) catchUpPage(ctx context.Context, q domain.PageQuery) (out domain.PageRows, err error) {
	b := &pgx.Batch{}
	b.Queue(catchUpPage, catchUpPageArgs(q)...)
	b.Queue(horizonGet)
	res := r.runner.DB(ctx).SendBatch(ctx, b)
	defer func() {
		if cerr := res.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	rows, err := res.Query()
	if err != nil {
		return out, err
	}
	scan := takeScan()
	if out.Events, err = scan.collect(rows, q.Limit); err != nil {
		putScan(scan)
		return out, err
	}
	released := false
	out.Release = func() {
		if !released {
			released = true
			putScan(scan)
		}
	}
	if err := res.QueryRow().Scan(&out.HorizonSeq); err != nil {
		out.Release()
		return domain.PageRows{}, fmt.Errorf("horizon: %w", err)
	}
	return out, nil
}

// catchUpPageArgs are the parameters $1 to $8 of catchup_page.sql.
func catchUpPageArgs(q domain.PageQuery) []any {
	f := q.Filter
	return []any{
		q.After, q.Through, q.Limit, toUUID(f.PrincipalID), f.InstanceWide,
		uuidArray(f.ChannelIDs), uuidArray(f.FullyVisibleSpaceIDs), uuidArray(f.VisibleSpaceIDs),
	}
}

// uuidArray passes ids as a uuid[] parameter; nil becomes the empty array, so that IN
// (SELECT unnest(...)) is simply false instead of depending on NULL rules.
func uuidArray(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}
