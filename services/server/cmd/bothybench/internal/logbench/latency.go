package logbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/wire"
)

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
func latencyCase(ctx context.Context, app *wire.App, url string, o bench.Options) (r LatencyResult, err error) {
	listen, err := bench.Connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer func() { _ = listen.Close(context.WithoutCancel(ctx)) }()
	notify, err := bench.Connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer func() { _ = notify.Close(context.WithoutCancel(ctx)) }()
	if _, err := listen.Exec(ctx, "LISTEN "+bench.RttChannel); err != nil {
		return r, fmt.Errorf("listen: %w", err)
	}

	idle, err := bench.RoundTrips(ctx, listen, notify, min(o.Duration, 2*time.Second), 0)
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
	load := bench.StartLoad(loadCtx, app, o.Rate, o.LatWriter, func() []kernel.Event { return bench.NewEvents(1) })
	if !bench.SleepCtx(ctx, o.Warmup) {
		stopLoad()
		_, _ = load.Wait()
		return r, ctx.Err()
	}
	committedBefore := load.Committed.Load()
	window.Store(true)
	began := time.Now()
	bare, rttErr := bench.RoundTrips(ctx, listen, notify, o.Duration, 0)
	// roundTrips runs for o.duration: the window closes when it returns.
	window.Store(false)
	elapsed := time.Since(began)
	committed := load.Committed.Load() - committedBefore
	stopLoad()
	skipped, loadErr := load.Wait()
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
		if committed, ok := load.Acks[id]; ok {
			samples = append(samples, max(got.Sub(committed), 0))
		}
	}
	if len(samples) == 0 || len(bare) == 0 {
		return r, errors.New("no latency samples: nothing was delivered in the measured window")
	}

	r.RequestedRate = o.Rate
	r.AchievedRate = bench.Round1(float64(committed) / elapsed.Seconds())
	r.Skipped = skipped
	r.Samples, r.BareSamples = len(samples), len(bare)
	r.P50Ms, r.P99Ms = bench.Ms(bench.Percentile(samples, 50)), bench.Ms(bench.Percentile(samples, 99))
	r.FromWriteP50Ms, r.FromWriteP99Ms = bench.Ms(bench.Percentile(fromWrite, 50)), bench.Ms(bench.Percentile(fromWrite, 99))
	r.BareP50Ms, r.BareP99Ms = bench.Ms(bench.Percentile(bare, 50)), bench.Ms(bench.Percentile(bare, 99))
	r.IdleBareP50Ms, r.IdleBareP99Ms = bench.Ms(bench.Percentile(idle, 50)), bench.Ms(bench.Percentile(idle, 99))
	r.P50Ratio = bench.Round2(r.P50Ms / r.BareP50Ms)
	r.P99Ratio = bench.Round2(r.P99Ms / r.BareP99Ms)
	return r, nil
}
