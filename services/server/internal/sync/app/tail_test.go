package app_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

func TestNewTailRejectsUnworkableConfigurations(t *testing.T) {
	t.Parallel()
	log := newFakeLog()
	tests := []struct {
		name   string
		reader app.EventReader
		cfg    app.TailConfig
		want   string
	}{
		{name: "no reader", cfg: app.TailConfig{PollInterval: time.Second, BatchSize: 1}, want: "required"},
		{name: "no poll interval", reader: log, cfg: app.TailConfig{BatchSize: 1}, want: "poll interval"},
		{name: "no batch", reader: log, cfg: app.TailConfig{PollInterval: time.Second}, want: "batch size"},
		{name: "backoff upside down", reader: log, cfg: app.TailConfig{PollInterval: time.Second, BatchSize: 1, RetryBase: time.Second, RetryCap: time.Millisecond}, want: "retry backoff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := app.NewTail(tc.reader, log, nil, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTail = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestTailDeliversEveryEventOnceInOrder appends events in bursts larger and smaller than a
// batch and expects each of several subscribers to see exactly the events committed after
// the tail started, in order, in contiguous batches.
func TestTailDeliversEveryEventOnceInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before int   // events committed before the tail starts
		bursts []int // events per notification afterwards
		batch  int
	}{
		{name: "one event at a time", bursts: []int{1, 1, 1, 1}, batch: 3},
		{name: "bursts over several batches", before: 4, bursts: []int{7, 3, 10, 1}, batch: 3},
		{name: "batch of one", before: 2, bursts: []int{5, 2}, batch: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, l := newFakeLog(), newFakeListener()
			start := log.append(tc.before)
			tail := newTail(t, log, l, app.TailConfig{BatchSize: tc.batch})
			subs := []syncmod.Subscription{tail.Subscribe(100), tail.Subscribe(100)}
			run(t, tail)
			waitReady(t, tail)
			l.waitConnected(t)
			if last, ok := tail.Last(); !ok || last != start {
				t.Fatalf("Last = %d, %v; want the head %d", last, ok, start)
			}
			var head int64
			for _, n := range tc.bursts {
				head = log.append(n)
				l.send(t, head)
			}
			late := tail.Subscribe(100) // joins midway: sees what comes after it joined
			head = log.append(2)
			l.send(t, head)
			for i, sub := range subs {
				if got, want := collect(t, sub, start, head), seqRange(start+1, head); !slices.Equal(got, want) {
					t.Fatalf("subscriber %d got %v, want %v", i, got, want)
				}
			}
			var first syncmod.Batch
			select {
			case first = <-late.Batches():
			case <-time.After(within):
				t.Fatal("the late subscriber got nothing")
			}
			if first.After < start || first.Last() > head {
				t.Fatalf("late subscriber's first batch %d..%d lies outside %d..%d", first.After, first.Last(), start, head)
			}
			collect(t, late, first.Last(), head)
			if last, _ := tail.Last(); last != head {
				t.Fatalf("Last = %d, want %d", last, head)
			}
		})
	}
}

// TestTailDropsALaggingSubscriber keeps one subscriber from reading: once its buffer is full
// it is dropped with the last seq it was given, while the other subscriber gets everything.
func TestTailDropsALaggingSubscriber(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	tail := newTail(t, log, l, app.TailConfig{BatchSize: 2})
	slow := tail.Subscribe(2)
	fast := tail.Subscribe(100)
	run(t, tail)
	waitReady(t, tail)
	l.waitConnected(t)

	// Four batches: 1-2, 3-4, 5-6, 7; slow has room for the first two.
	head := log.append(7)
	l.send(t, head)
	if got := collect(t, fast, 0, head); !slices.Equal(got, seqRange(1, head)) {
		t.Fatalf("fast subscriber got %v", got)
	}
	var got []int64
	for b := range slow.Batches() {
		for _, e := range b.Events {
			got = append(got, e.Seq)
		}
	}
	if !slices.Equal(got, seqRange(1, 4)) {
		t.Fatalf("slow subscriber got %v before it was dropped, want 1..4", got)
	}
	var lagged *syncmod.LaggedError
	if err := slow.Err(); !errors.As(err, &lagged) || lagged.Last != 4 || !errors.Is(err, syncmod.ErrLagged) {
		t.Fatalf("slow.Err() = %v, want a LaggedError at 4", err)
	}

	// The tail goes on without it.
	head = log.append(1)
	l.send(t, head)
	collect(t, fast, 7, head)
	slow.Close() // harmless after the drop
	if err := slow.Err(); !errors.As(err, &lagged) {
		t.Fatalf("Close after the drop changed Err to %v", err)
	}
}

// TestTailWakesOnNotification sets a poll interval of an hour: events still arrive, because
// notifications wake the tail; a notification for a head already delivered costs no read.
func TestTailWakesOnNotification(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	tail := newTail(t, log, l, app.TailConfig{})
	sub := tail.Subscribe(10)
	stop := run(t, tail)
	waitReady(t, tail)
	l.waitConnected(t)

	head := log.append(2)
	l.send(t, head)
	collect(t, sub, 0, head)
	l.send(t, head) // stale: nothing new
	l.send(t, 1)    // older still
	head = log.append(1)
	l.send(t, head)
	collect(t, sub, 2, head)
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	// Reads: after the start (and maybe once more on connecting), one per fresh head.
	if n := log.reads(); n < 3 || n > 4 {
		t.Fatalf("%d reads, want 3 or 4: stale notifications must not cause reads", n)
	}
}

// TestTailPollsWithoutListener runs the tail with polling only.
func TestTailPollsWithoutListener(t *testing.T) {
	t.Parallel()
	log := newFakeLog()
	tail := newTail(t, log, nil, app.TailConfig{PollInterval: 2 * time.Millisecond})
	sub := tail.Subscribe(10)
	run(t, tail)
	waitReady(t, tail)
	head := log.append(5)
	if got := collect(t, sub, 0, head); !slices.Equal(got, seqRange(1, head)) {
		t.Fatalf("got %v", got)
	}
}

// TestTailPollsWhileTheListenerIsDown loses the listener's connection, keeps it from
// reconnecting for a while, and expects events by polling meanwhile, then by notification
// once the listener is back.
func TestTailPollsWhileTheListenerIsDown(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	tail := newTail(t, log, l, app.TailConfig{PollInterval: 2 * time.Millisecond, RetryBase: time.Millisecond, RetryCap: 2 * time.Millisecond})
	sub := tail.Subscribe(100)
	run(t, tail)
	waitReady(t, tail)
	l.waitConnected(t)

	l.mu.Lock()
	l.failConnects = 20
	l.mu.Unlock()
	l.drop(t, errDown)
	head := log.append(4) // nobody notifies: polling finds them
	collect(t, sub, 0, head)
	l.waitConnected(t)
	l.mu.Lock()
	listens := l.listens
	l.mu.Unlock()
	if listens < 22 {
		t.Fatalf("%d Listen calls, want the first, 20 failures and a reconnect", listens)
	}
	head2 := log.append(3)
	l.send(t, head2)
	collect(t, sub, head, head2)
}

// TestTailReadsOnReconnect uses no polling at all: events committed while the listener was
// disconnected are read as soon as it is listening again.
func TestTailReadsOnReconnect(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	tail := newTail(t, log, l, app.TailConfig{})
	sub := tail.Subscribe(100)
	run(t, tail)
	waitReady(t, tail)
	l.waitConnected(t)

	l.drop(t, nil) // a session that ends without an error is a lost connection too
	head := log.append(5)
	l.waitConnected(t)
	if got := collect(t, sub, 0, head); !slices.Equal(got, seqRange(1, head)) {
		t.Fatalf("got %v", got)
	}
}

// TestTailRetriesFailedReads fails reads and the head for a while: nothing is skipped or
// delivered twice.
func TestTailRetriesFailedReads(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	start := log.append(3)
	log.failHeads = 2
	tail := newTail(t, log, l, app.TailConfig{BatchSize: 2})
	sub := tail.Subscribe(100)
	run(t, tail)
	waitReady(t, tail)
	l.waitConnected(t)

	log.mu.Lock()
	log.failReads = 3
	log.mu.Unlock()
	head := log.append(5)
	l.send(t, head)
	if got := collect(t, sub, start, head); !slices.Equal(got, seqRange(start+1, head)) {
		t.Fatalf("got %v", got)
	}
}

// TestTailStopsOnAReaderOutOfOrder refuses to go on with a reader that breaks its contract.
func TestTailStopsOnAReaderOutOfOrder(t *testing.T) {
	t.Parallel()
	log := newFakeLog()
	log.swap = true
	tail := newTail(t, log, nil, app.TailConfig{PollInterval: time.Millisecond})
	sub := tail.Subscribe(1)
	stop := run(t, tail)
	waitReady(t, tail)
	log.append(3)
	select {
	case _, ok := <-sub.Batches():
		if ok {
			t.Fatal("a batch out of order was delivered")
		}
	case <-time.After(within):
		t.Fatal("the tail did not stop")
	}
	if err := stop(); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Run = %v, want an out-of-order error", err)
	}
}

// TestTailStopEndsSubscriptions stops the tail: every subscription ends with ErrTailStopped,
// later ones start ended, and Run cannot be called again.
func TestTailStopEndsSubscriptions(t *testing.T) {
	t.Parallel()
	log, l := newFakeLog(), newFakeListener()
	tail := newTail(t, log, l, app.TailConfig{})
	sub := tail.Subscribe(1)
	closed := tail.Subscribe(1)
	closed.Close()
	closed.Close()
	if _, ok := <-closed.Batches(); ok || closed.Err() != nil {
		t.Fatalf("a closed subscription is open or has error %v", closed.Err())
	}
	stop := run(t, tail)
	waitReady(t, tail)
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if _, ok := <-sub.Batches(); ok || !errors.Is(sub.Err(), syncmod.ErrTailStopped) {
		t.Fatalf("after stop: Err = %v, want ErrTailStopped", sub.Err())
	}
	after := tail.Subscribe(1)
	if _, ok := <-after.Batches(); ok || !errors.Is(after.Err(), syncmod.ErrTailStopped) {
		t.Fatalf("subscribing to a stopped tail: Err = %v, want ErrTailStopped", after.Err())
	}
	if err := tail.Run(t.Context()); !errors.Is(err, app.ErrTailRan) {
		t.Fatalf("second Run = %v, want ErrTailRan", err)
	}
}

// TestTailStopsWhileTheDatabaseIsDown cancels a tail that never read its head.
func TestTailStopsWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	log := newFakeLog()
	log.failHeads = 1 << 30
	tail := newTail(t, log, nil, app.TailConfig{})
	sub := tail.Subscribe(1)
	stop := run(t, tail)
	if err := stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if _, ok := tail.Last(); ok {
		t.Fatal("Last reports a position the tail never read")
	}
	if !errors.Is(sub.Err(), syncmod.ErrTailStopped) {
		t.Fatalf("Err = %v", sub.Err())
	}
}
