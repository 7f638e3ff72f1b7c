package bench

import (
	"context"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wire"
)

// RttChannel is the notification channel of the bare round trip; nothing else uses it.
const RttChannel = "bothy_bench_round_trip"

// notifyTimeout bounds the wait for one notification of the bare round trip.
const notifyTimeout = 10 * time.Second

// RoundTrips sends one notification at a time from notify to listen for d and returns each
// round trip. With every above zero a round trip starts at most once per every (one late
// start is not made up), so the probe adds a known, small load of its own to the load it
// measures under; with zero the next starts as soon as the last returns.
func RoundTrips(ctx context.Context, listen, notify *pgx.Conn, d, every time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	deadline := time.Now().Add(d)
	next := time.Now()
	for time.Now().Before(deadline) {
		if every > 0 {
			if wait := time.Until(next); wait > 0 && !SleepCtx(ctx, wait) {
				return nil, ctx.Err()
			}
			next = time.Now().Add(every)
		}
		start := time.Now()
		if _, err := notify.Exec(ctx, "SELECT pg_notify('"+RttChannel+"', '')"); err != nil {
			return nil, fmt.Errorf("notify: %w", err)
		}
		wctx, cancel := context.WithTimeout(ctx, notifyTimeout)
		_, err := listen.WaitForNotification(wctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("wait for notification: %w", err)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// Load paces one-event transactions through the appender at a fixed rate.
type Load struct {
	Committed atomic.Int64
	skipped   atomic.Int64
	wg        gosync.WaitGroup
	mu        gosync.Mutex
	err       error
	Acks      map[uuid.UUID]time.Time // event id -> when its commit returned; read after wait
}

// StartLoad sends rate jobs per second to writers goroutines, each job one transaction
// appending the events of newTx (one event: its commit is recorded by the event's id); a
// tick that finds every writer busy and the queue full is skipped (and counted), so the
// pacer never falls behind.
func StartLoad(ctx context.Context, app *wire.App, rate, writers int, newTx func() []kernel.Event) *Load {
	l := &Load{Acks: map[uuid.UUID]time.Time{}}
	jobs := make(chan struct{}, rate)
	for range writers {
		l.wg.Go(func() {
			for range jobs {
				events := newTx()
				if err := AppendReal(context.WithoutCancel(ctx), app, events); err != nil {
					l.mu.Lock()
					if l.err == nil {
						l.err = err
					}
					l.mu.Unlock()
					continue
				}
				committed := time.Now()
				l.mu.Lock()
				l.Acks[events[0].ID] = committed
				l.mu.Unlock()
				l.Committed.Add(1)
			}
		})
	}
	l.wg.Go(func() {
		defer close(jobs)
		interval := time.Second / time.Duration(rate)
		next := time.Now()
		for {
			next = next.Add(interval)
			if !SleepCtx(ctx, time.Until(next)) {
				return
			}
			select {
			case jobs <- struct{}{}:
			default:
				l.skipped.Add(1)
			}
		}
	})
	return l
}

// Wait waits for the pacer (stopped through its context) and the writers, and returns the
// skipped ticks and the first append error.
func (l *Load) Wait() (int64, error) {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped.Load(), l.err
}
