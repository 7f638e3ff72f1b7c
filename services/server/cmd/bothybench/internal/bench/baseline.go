package bench

import (
	"context"
	_ "embed" // the bare baseline's SQL
	"encoding/json"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	_ "embed" // the baselines' SQL

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/wire"
)

// BareCounterAdvance is the bare loop's counter advance (UPDATE the event_seq counter
// RETURNING its value); the sync world's bulk seeding advances the counter with it too.
//
//go:embed queries/bare_counter_advance.sql
var BareCounterAdvance string

// bareEventInsert is the bare loop's INSERT of its events.
//
//go:embed queries/bare_event_insert.sql
var bareEventInsert string

// NewEvents returns k message.created events with fresh ids and a payload of a typical size
// (about 300 bytes). Both the appender and the baseline build their events with it, so both
// pay the same for building them.
func NewEvents(k int) []kernel.Event {
	out := make([]kernel.Event, k)
	for i := range out {
		msg, thread, channel, space, author := ids.New(), ids.New(), ids.New(), ids.New(), ids.New()
		payload := fmt.Sprintf(`{"message_id":%q,"thread_id":%q,"channel_id":%q,"author_id":%q,"seq":%d,"content_md":"Sam, the deploy is done: the new build is live on every node.","created_at":"2025-01-02T03:04:05Z"}`,
			msg, thread, channel, author, i+1)
		out[i] = kernel.Event{
			ID:           ids.New(),
			Type:         "message.created",
			ActorID:      author,
			SpaceID:      space,
			ChannelID:    channel,
			ThreadID:     thread,
			ResourceKind: kernel.ResourceMessage,
			ResourceID:   msg,
			Payload:      json.RawMessage(payload),
		}
	}
	return out
}

// AppendReal commits one transaction appending events through the wired appender.
func AppendReal(ctx context.Context, app *wire.App, events []kernel.Event) error {
	return app.Tx().RunInTx(ctx, func(ctx context.Context) error {
		return app.Appender().Append(ctx, events...)
	})
}

// AppendBare commits the same events with the bare transaction: BEGIN, the counter UPDATE
// RETURNING the new head, one INSERT of every event, COMMIT; no hooks, no staging, no NOTIFY.
func AppendBare(ctx context.Context, pool *pgxpool.Pool, events []kernel.Event) error {
	n := len(events)
	idsArr, actors, spaces, channels, threads, resources := make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n)
	payloads := make([]string, n)
	for i, e := range events {
		idsArr[i] = pgtype.UUID{Bytes: e.ID, Valid: true}
		actors[i] = pgtype.UUID{Bytes: e.ActorID, Valid: true}
		spaces[i] = pgtype.UUID{Bytes: e.SpaceID, Valid: true}
		channels[i] = pgtype.UUID{Bytes: e.ChannelID, Valid: true}
		threads[i] = pgtype.UUID{Bytes: e.ThreadID, Valid: true}
		resources[i] = pgtype.UUID{Bytes: e.ResourceID, Valid: true}
		raw, _ := e.Payload.(json.RawMessage)
		payloads[i] = string(raw)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("bare: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var last int64
	if err := tx.QueryRow(ctx, BareCounterAdvance, n).Scan(&last); err != nil {
		return fmt.Errorf("bare: advance the counter: %w", err)
	}
	if _, err := tx.Exec(ctx, bareEventInsert, last, idsArr, actors, spaces, channels, threads, resources, payloads); err != nil {
		return fmt.Errorf("bare: insert: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("bare: commit: %w", err)
	}
	return nil
}

// Drive runs writers goroutines that call op with k fresh events each time until d has
// passed, and returns the committed events per second and the number of transactions. A
// transaction started before the deadline counts, and the rate is over the time until the
// last one finished.
func Drive(ctx context.Context, writers, k int, d time.Duration, op func(context.Context, []kernel.Event) error) (perSecond float64, txs int64, err error) {
	var (
		count    atomic.Int64
		firstErr error
		errOnce  gosync.Once
		wg       gosync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for range writers {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := op(ctx, NewEvents(k)); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	n := count.Load()
	return float64(n*int64(k)) / elapsed.Seconds(), n, nil
}

// BarePermissionVersion is the server's permission_version read, issued bare.
//
//go:embed queries/bare_permission_version.sql
var BarePermissionVersion string
