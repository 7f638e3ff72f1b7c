package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/wire"
)

// rttChannel is the notification channel of the bare round trip; nothing else uses it.
const rttChannel = "bothy_bench_round_trip"

// notifyTimeout bounds the wait for one notification of the bare round trip.
const notifyTimeout = 10 * time.Second

// latencyCase measures the tail's commit-to-subscriber latency while writers append o.rate
// events per second (one event per transaction), and beside it, under the same load, the
// round trip of a bare NOTIFY from one plain connection to another that LISTENs. The bare
// round trip is measured once more without load, for reference.
//
// A tail sample is the time from the commit (the moment RunInTx returned to the writer,
// which is when PostgreSQL has made the transaction visible and queued its notification) to
// the moment the subscriber received the event's batch. The same events are also timed from
// their occurred_at (the database clock, taken in the appender's final round trip before
// COMMIT; the database runs on this machine, so both clocks are the same), which adds the
// commit itself. A bare sample is the time from sending SELECT pg_notify (which commits at
// once) to its arrival on the listening connection.
func latencyCase(ctx context.Context, app *wire.App, url string, o options) (r latencyResult, err error) {
	listen, err := connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer func() { _ = listen.Close(context.WithoutCancel(ctx)) }()
	notify, err := connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer func() { _ = notify.Close(context.WithoutCancel(ctx)) }()
	if _, err := listen.Exec(ctx, "LISTEN "+rttChannel); err != nil {
		return r, fmt.Errorf("listen: %w", err)
	}

	idle, err := roundTrips(ctx, listen, notify, min(o.duration, 2*time.Second), 0)
	if err != nil {
		return r, fmt.Errorf("idle round trips: %w", err)
	}

	tailCtx, stopTail := context.WithCancel(ctx)
	tailDone := make(chan error, 1)
	tail := app.Tail()
	sub := tail.Subscribe(1 << 14)
	go func() { tailDone <- tail.Run(tailCtx) }()
	defer func() {
		stopTail()
		if terr := <-tailDone; terr != nil && err == nil {
			err = fmt.Errorf("tail: %w", terr)
		}
	}()
	select {
	case <-tail.Ready():
	case terr := <-tailDone:
		tailDone <- terr // for the deferred wait
		return r, errors.New("the tail stopped at once")
	case <-ctx.Done():
		return r, ctx.Err()
	}

	// The subscriber records when it received each event of the measured window.
	var (
		window    atomic.Bool
		received  = map[uuid.UUID]time.Time{}
		fromWrite []time.Duration
		subDone   = make(chan struct{})
	)
	go func() {
		defer close(subDone)
		for b := range sub.Batches() {
			now := time.Now()
			if !window.Load() {
				continue
			}
			for _, e := range b.Events {
				received[e.ID] = now
				fromWrite = append(fromWrite, max(now.Sub(e.OccurredAt), 0))
			}
		}
	}()

	loadCtx, stopLoad := context.WithCancel(ctx)
	load := startLoad(loadCtx, app, o.rate, o.latWriter, func() []kernel.Event { return newEvents(1) })
	if !sleepCtx(ctx, o.warmup) {
		stopLoad()
		_, _ = load.wait()
		return r, ctx.Err()
	}
	committedBefore := load.committed.Load()
	window.Store(true)
	began := time.Now()
	bare, rttErr := roundTrips(ctx, listen, notify, o.duration, 0)
	// roundTrips runs for o.duration: the window closes when it returns.
	window.Store(false)
	elapsed := time.Since(began)
	committed := load.committed.Load() - committedBefore
	stopLoad()
	skipped, loadErr := load.wait()
	stopTail()
	<-subDone
	if err := errors.Join(rttErr, loadErr); err != nil {
		return r, err
	}
	if err := sub.Err(); errors.Is(err, syncmod.ErrLagged) {
		return r, fmt.Errorf("the subscriber could not keep up: %w", err)
	}
	var samples []time.Duration
	for id, got := range received {
		if committed, ok := load.acks[id]; ok {
			samples = append(samples, max(got.Sub(committed), 0))
		}
	}
	if len(samples) == 0 || len(bare) == 0 {
		return r, errors.New("no latency samples: nothing was delivered in the measured window")
	}

	r.RequestedRate = o.rate
	r.AchievedRate = round1(float64(committed) / elapsed.Seconds())
	r.Skipped = skipped
	r.Samples, r.BareSamples = len(samples), len(bare)
	r.P50Ms, r.P99Ms = ms(percentile(samples, 50)), ms(percentile(samples, 99))
	r.FromWriteP50Ms, r.FromWriteP99Ms = ms(percentile(fromWrite, 50)), ms(percentile(fromWrite, 99))
	r.BareP50Ms, r.BareP99Ms = ms(percentile(bare, 50)), ms(percentile(bare, 99))
	r.IdleBareP50Ms, r.IdleBareP99Ms = ms(percentile(idle, 50)), ms(percentile(idle, 99))
	r.P50Ratio = round2(r.P50Ms / r.BareP50Ms)
	r.P99Ratio = round2(r.P99Ms / r.BareP99Ms)
	return r, nil
}

// roundTrips sends one notification at a time from notify to listen for d and returns each
// round trip. With every above zero a round trip starts at most once per every (one late
// start is not made up), so the probe adds a known, small load of its own to the load it
// measures under; with zero the next starts as soon as the last returns.
func roundTrips(ctx context.Context, listen, notify *pgx.Conn, d, every time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	deadline := time.Now().Add(d)
	next := time.Now()
	for time.Now().Before(deadline) {
		if every > 0 {
			if wait := time.Until(next); wait > 0 && !sleepCtx(ctx, wait) {
				return nil, ctx.Err()
			}
			next = time.Now().Add(every)
		}
		start := time.Now()
		if _, err := notify.Exec(ctx, "SELECT pg_notify('"+rttChannel+"', '')"); err != nil {
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

// load paces one-event transactions through the appender at a fixed rate.
type load struct {
	committed atomic.Int64
	skipped   atomic.Int64
	wg        gosync.WaitGroup
	mu        gosync.Mutex
	err       error
	acks      map[uuid.UUID]time.Time // event id -> when its commit returned; read after wait
}

// startLoad sends rate jobs per second to writers goroutines, each job one transaction
// appending the events of newTx (one event: its commit is recorded by the event's id); a
// tick that finds every writer busy and the queue full is skipped (and counted), so the
// pacer never falls behind.
func startLoad(ctx context.Context, app *wire.App, rate, writers int, newTx func() []kernel.Event) *load {
	l := &load{acks: map[uuid.UUID]time.Time{}}
	jobs := make(chan struct{}, rate)
	for range writers {
		l.wg.Go(func() {
			for range jobs {
				events := newTx()
				if err := appendReal(context.WithoutCancel(ctx), app, events); err != nil {
					l.mu.Lock()
					if l.err == nil {
						l.err = err
					}
					l.mu.Unlock()
					continue
				}
				committed := time.Now()
				l.mu.Lock()
				l.acks[events[0].ID] = committed
				l.mu.Unlock()
				l.committed.Add(1)
			}
		})
	}
	l.wg.Go(func() {
		defer close(jobs)
		interval := time.Second / time.Duration(rate)
		next := time.Now()
		for {
			next = next.Add(interval)
			if !sleepCtx(ctx, time.Until(next)) {
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

// wait waits for the pacer (stopped through its context) and the writers, and returns the
// skipped ticks and the first append error.
func (l *load) wait() (int64, error) {
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped.Load(), l.err
}

// sleepCtx waits d (nothing when d <= 0) or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[max(rank-1, 0)]
}

func ms(d time.Duration) float64 { return round2(float64(d.Microseconds()) / 1000) }
