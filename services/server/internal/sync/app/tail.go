package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	syncmod "bothy.example.com/server/internal/sync"
)

// Defaults of TailConfig's retry backoff, used when the fields are zero: the defaults of the
// keys sync.tail_retry_base and sync.tail_retry_cap.
var (
	// DefaultRetryBase is the first wait after a failed read or a lost listener connection.
	DefaultRetryBase = mustDuration(KeyTailRetryBase)
	// DefaultRetryCap caps the doubling waits, so the tail reconnects soon after PostgreSQL
	// is back without hammering it while it is down.
	DefaultRetryCap = mustDuration(KeyTailRetryCap)
)

// mustDuration is a duration key's default; config.Define has checked that it parses.
func mustDuration(k config.Key) time.Duration {
	d, err := time.ParseDuration(k.Default)
	if err != nil {
		panic(fmt.Sprintf("sync: the default of %s: %v", k.Name, err))
	}
	return d
}

// ErrTailRan is returned by a second call of Tail.Run: a tail follows the log once, from the
// head it read at its start, and its stopped subscriptions cannot be revived.
var ErrTailRan = errors.New("sync tail: Run called twice")

// TailConfig shapes a Tail. PollInterval, BatchSize, RetryBase and RetryCap come from the keys
// sync.tail_poll_interval, sync.tail_batch_size, sync.tail_retry_base and sync.tail_retry_cap.
type TailConfig struct {
	// PollInterval is how long the tail waits without a notification before it reads the
	// log anyway (the fallback when NOTIFY is lost or the listener is down). Required.
	PollInterval time.Duration
	// BatchSize is the most events one read returns and one batch carries. Required.
	BatchSize int
	// RetryBase and RetryCap bound the doubling wait after a failed read or a lost listener
	// connection; zero means DefaultRetryBase and DefaultRetryCap.
	RetryBase, RetryCap time.Duration
	// Logger receives the tail's lifecycle and failures; nil discards them.
	Logger *slog.Logger
}

// Tail follows the log and fans its events out to subscribers (see syncmod.Tail). Build it
// with NewTail, run it with Run, subscribe with Subscribe at any time.
type Tail struct {
	reader   EventReader
	head     HeadReader
	listener Listener
	cfg      TailConfig
	log      *slog.Logger

	ran   atomic.Bool
	ready chan struct{} // closed once the start position is known

	// wake carries "a notification arrived" from the listener to Run (capacity 1: wake-ups
	// coalesce); notified is the highest head any notification carried, force says a read
	// is due whatever notified says (listener (re)connected, or a payload without a seq).
	wake     chan struct{}
	notified atomic.Int64
	force    atomic.Bool

	mu      sync.Mutex
	last    int64 // seq of the last event delivered, or the start position
	subs    map[*subscription]struct{}
	stopped bool
}

var _ syncmod.Tail = (*Tail)(nil)

// NewTail returns a tail over reader and head, woken by listener (nil: polling only). It
// fails when the configuration cannot work: a PollInterval or BatchSize below 1, or
// RetryBase above RetryCap.
func NewTail(reader EventReader, head HeadReader, listener Listener, cfg TailConfig) (*Tail, error) {
	if reader == nil || head == nil {
		return nil, errors.New("sync tail: reader and head are required")
	}
	if cfg.PollInterval <= 0 {
		return nil, fmt.Errorf("sync tail: poll interval %v, want more than 0", cfg.PollInterval)
	}
	if cfg.BatchSize < 1 {
		return nil, fmt.Errorf("sync tail: batch size %d, want at least 1", cfg.BatchSize)
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryCap == 0 {
		cfg.RetryCap = max(DefaultRetryCap, cfg.RetryBase)
	}
	if cfg.RetryBase < 0 || cfg.RetryBase > cfg.RetryCap {
		return nil, fmt.Errorf("sync tail: retry backoff %v to %v is not a range", cfg.RetryBase, cfg.RetryCap)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &Tail{
		reader:   reader,
		head:     head,
		listener: listener,
		cfg:      cfg,
		log:      logger,
		ready:    make(chan struct{}),
		wake:     make(chan struct{}, 1),
		last:     -1,
		subs:     map[*subscription]struct{}{},
	}
	t.notified.Store(-1)
	return t, nil
}

// Ready is closed once Run has read the head it starts from; events committed after that
// reach the subscribers. Tests and the gateway wait on it before relying on live delivery.
func (t *Tail) Ready() <-chan struct{} {
	return t.ready
}

// Last returns the seq of the last event the tail delivered (its start position before the
// first), and false before Run has read the head.
func (t *Tail) Last() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last, t.last >= 0
}

// Run follows the log until ctx ends, then ends every subscription with ErrTailStopped and
// returns nil. It reads the head first (retrying with backoff while the database is down),
// then, whenever a notification carries a head beyond what it delivered, or
// PollInterval passed without one, reads seq > last in batches of BatchSize until it has
// caught up, delivering each batch to every subscriber. A failed read is retried after a
// backoff from the same position, so nothing is skipped or delivered twice. It returns an
// error only for a broken reader (events out of order) and ErrTailRan when called twice.
func (t *Tail) Run(ctx context.Context) error {
	if !t.ran.CompareAndSwap(false, true) {
		return ErrTailRan
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		t.stop()
	}()
	if t.listener != nil {
		wg.Go(func() { t.listen(ctx) })
	}

	last, ok := t.start(ctx)
	if !ok {
		return nil
	}
	retry := newBackoff(t.cfg.RetryBase, t.cfg.RetryCap)
	for {
		var wait time.Duration
		next, err := t.drain(ctx, last)
		last = next
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errOutOfOrder):
			t.log.ErrorContext(ctx, "sync tail stopped", "error", err.Error())
			return err
		case err != nil:
			wait = retry.next()
			t.log.WarnContext(ctx, "sync tail read failed", "error", err.Error(), "after", last, "retry_in", wait.String())
		default:
			retry.reset()
			wait = t.cfg.PollInterval
		}
		if !t.wait(ctx, wait, last) {
			return nil
		}
	}
}

// start reads the head the tail starts from, retrying until it succeeds or ctx ends.
func (t *Tail) start(ctx context.Context) (int64, bool) {
	retry := newBackoff(t.cfg.RetryBase, t.cfg.RetryCap)
	for {
		head, err := t.head.EventSeq(ctx)
		if err == nil {
			t.mu.Lock()
			t.last = head
			t.mu.Unlock()
			close(t.ready)
			t.log.InfoContext(ctx, "sync tail started", "head", head)
			return head, true
		}
		if ctx.Err() != nil {
			return 0, false
		}
		d := retry.next()
		t.log.WarnContext(ctx, "sync tail cannot read the head", "error", err.Error(), "retry_in", d.String())
		if !sleep(ctx, d) {
			return 0, false
		}
	}
}

// errOutOfOrder marks a reader that broke its contract; continuing would deliver duplicates
// or skip events, so Run stops instead.
var errOutOfOrder = errors.New("sync tail: the reader returned events out of order")

// drain reads and delivers batches after last until a read returns fewer than BatchSize
// events, and returns the new last seq (unchanged by a failed read).
func (t *Tail) drain(ctx context.Context, last int64) (int64, error) {
	for {
		events, err := t.reader.EventsAfter(ctx, last, t.cfg.BatchSize)
		if err != nil {
			return last, fmt.Errorf("read events after %d: %w", last, err)
		}
		if len(events) == 0 {
			return last, nil
		}
		prev := last
		for _, e := range events {
			if e.Seq <= prev {
				return last, fmt.Errorf("%w: seq %d after %d", errOutOfOrder, e.Seq, prev)
			}
			prev = e.Seq
		}
		t.deliver(syncmod.Batch{After: last, Events: events})
		last = prev
		if len(events) < t.cfg.BatchSize {
			return last, nil
		}
	}
}

// wait blocks for d, or until a notification asks for a read, or ctx ends (false). A
// notification whose head the tail already delivered is ignored: several commits coalesce
// into one read, and the wake-ups they leave behind cost nothing.
func (t *Tail) wait(ctx context.Context, d time.Duration, last int64) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-t.wake:
			if t.force.Swap(false) || t.notified.Load() > last {
				return true
			}
		}
	}
}

// deliver hands b to every subscriber without blocking: a subscriber whose buffer is full
// is dropped with a *LaggedError.
func (t *Tail) deliver(b syncmod.Batch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range t.subs {
		select {
		case s.ch <- b:
			s.last = b.Last()
		default:
			s.end(&syncmod.LaggedError{Last: s.last})
			delete(t.subs, s)
			t.log.Warn("sync tail dropped a lagging subscriber", "last", s.last, "buffer", cap(s.ch))
		}
	}
	t.last = b.Last()
}

// listen keeps the listener connected until ctx ends, reconnecting with backoff.
func (t *Tail) listen(ctx context.Context) {
	retry := newBackoff(t.cfg.RetryBase, t.cfg.RetryCap)
	for {
		err := t.listener.Listen(ctx, func() {
			retry.reset()
			t.log.InfoContext(ctx, "sync tail listening")
			// Notifications sent while it was not listening are lost: read once now.
			t.force.Store(true)
			t.signal()
		}, t.notify)
		if ctx.Err() != nil {
			return
		}
		d := retry.next()
		msg := "connection ended"
		if err != nil {
			msg = err.Error()
		}
		t.log.WarnContext(ctx, "sync tail listener lost; polling until it reconnects", "error", msg, "retry_in", d.String())
		if !sleep(ctx, d) {
			return
		}
	}
}

// notify records the head a notification carried and wakes Run.
func (t *Tail) notify(head int64) {
	if head < 0 {
		t.force.Store(true)
	}
	for {
		cur := t.notified.Load()
		if head <= cur || t.notified.CompareAndSwap(cur, head) {
			break
		}
	}
	t.signal()
}

func (t *Tail) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// stop ends every subscription with ErrTailStopped; later subscriptions start ended.
func (t *Tail) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for s := range t.subs {
		s.end(syncmod.ErrTailStopped)
		delete(t.subs, s)
	}
}

// Subscribe registers a subscriber with room for buffer batches (at least 1); see
// syncmod.Tail.
func (t *Tail) Subscribe(buffer int) syncmod.Subscription {
	s := &subscription{tail: t, ch: make(chan syncmod.Batch, max(buffer, 1))}
	t.mu.Lock()
	defer t.mu.Unlock()
	s.last = t.last
	if t.stopped {
		s.end(syncmod.ErrTailStopped)
		return s
	}
	t.subs[s] = struct{}{}
	return s
}

// subscription is a subscriber's channel; its fields are guarded by the tail's mutex.
type subscription struct {
	tail   *Tail
	ch     chan syncmod.Batch
	last   int64
	err    error
	closed bool
}

// end closes the channel with err as the reason; the tail's mutex is held.
func (s *subscription) end(err error) {
	if s.closed {
		return
	}
	s.closed = true
	s.err = err
	close(s.ch)
}

func (s *subscription) Batches() <-chan syncmod.Batch {
	return s.ch
}

func (s *subscription) Err() error {
	s.tail.mu.Lock()
	defer s.tail.mu.Unlock()
	return s.err
}

func (s *subscription) Close() {
	s.tail.mu.Lock()
	defer s.tail.mu.Unlock()
	delete(s.tail.subs, s)
	s.end(nil)
}

// backoff doubles a wait from lo up to hi.
type backoff struct {
	lo, hi, cur time.Duration
}

func newBackoff(lo, hi time.Duration) *backoff {
	return &backoff{lo: lo, hi: hi}
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.lo
	} else {
		b.cur = min(b.cur*2, b.hi)
	}
	return b.cur
}

func (b *backoff) reset() {
	b.cur = 0
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
