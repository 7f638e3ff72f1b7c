package gateway

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	gosync "sync"
	"testing"
	"time"

	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// hubTail is a hand-written Tail whose subscriptions the test feeds and ends.
type hubTail struct {
	mu   gosync.Mutex
	subs []*hubSub
}

func (t *hubTail) Subscribe(int) syncmod.Subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &hubSub{ch: make(chan syncmod.Batch, 16)}
	t.subs = append(t.subs, s)
	return s
}

func (t *hubTail) Ready() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (t *hubTail) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

func (t *hubTail) last() *hubSub {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.subs[len(t.subs)-1]
}

type hubSub struct {
	mu     gosync.Mutex
	ch     chan syncmod.Batch
	err    error
	closed bool
}

func (s *hubSub) Batches() <-chan syncmod.Batch { return s.ch }

func (s *hubSub) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *hubSub) Close() { s.end(nil) }

func (s *hubSub) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed, s.err = true, err
		close(s.ch)
	}
}

func (s *hubSub) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// hubSession is a session as the hub sees it: its writer counts as running, so work is
// only queued (nothing is written).
func hubSession(g *Gateway) *session {
	return &session{g: g, ctx: context.Background(), running: true, wake: make(chan struct{}, 1)}
}

// queued returns what s has queued.
func (s *session) queued() ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lasts []int64
	for _, b := range s.batches {
		lasts = append(lasts, b.Last())
	}
	return lasts, s.subErr
}

func batchAt(seq int64) syncmod.Batch {
	return syncmod.Batch{After: seq - 1, Events: []domain.StoredEvent{{Seq: seq}}}
}

// waitFor polls cond for at most five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHub: one subscription for all sessions, made by the first and closed by the last;
// every batch queued on each session in order; a session with buffer batches waiting lags
// alone (errLagged, no more batches); a tail that drops the hub makes every session catch
// up (errHubLagged), and the next registration subscribes again.
func TestHub(t *testing.T) {
	t.Parallel()
	tail := &hubTail{}
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	h := newHub(tail, 2, 0)
	a, b := hubSession(g), hubSession(g)
	h.add(a)
	h.add(b)
	if n := tail.count(); n != 1 {
		t.Fatalf("%d subscriptions for two sessions, want 1", n)
	}
	sub := tail.last()
	sub.ch <- batchAt(1)
	sub.ch <- batchAt(2)
	waitFor(t, "two batches queued on both", func() bool {
		qa, _ := a.queued()
		qb, _ := b.queued()
		return slices.Equal(qa, []int64{1, 2}) && slices.Equal(qb, []int64{1, 2})
	})

	// b takes its batches; a does not, and lags on the third.
	b.mu.Lock()
	b.batches = nil
	b.mu.Unlock()
	sub.ch <- batchAt(3)
	sub.ch <- batchAt(4)
	waitFor(t, "b got 3 and 4", func() bool {
		qb, _ := b.queued()
		return slices.Equal(qb, []int64{3, 4})
	})
	qa, err := a.queued()
	if !slices.Equal(qa, []int64{1, 2}) || !errors.Is(err, errLagged) || errors.Is(err, errHubLagged) {
		t.Errorf("a queued %v with %v, want 1, 2 and errLagged", qa, err)
	}

	// The tail drops the hub: b (still registered) catches up, without it counting.
	sub.end(&syncmod.LaggedError{Last: 4})
	waitFor(t, "b told", func() bool {
		_, err := b.queued()
		return err != nil
	})
	if _, err := b.queued(); !errors.Is(err, errHubLagged) {
		t.Errorf("b got %v, want errHubLagged", err)
	}

	// Registering again subscribes again; the last to leave closes it.
	h.add(b)
	if n := tail.count(); n != 2 {
		t.Fatalf("%d subscriptions after the hub was dropped, want 2", n)
	}
	h.remove(a) // not registered: nothing changes
	if tail.last().isClosed() {
		t.Fatal("the subscription closed while b is registered")
	}
	h.remove(b)
	if !tail.last().isClosed() {
		t.Error("the last session left and the subscription stayed open")
	}
}

// queuedBatches returns the batches s has queued.
func (s *session) queuedBatches() []syncmod.Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]syncmod.Batch(nil), s.batches...)
}

// TestHubBatchWindow: with gateway.batch_window, the first batch after a quiet window is
// handed out at once; batches that come within the window after it wait until the window
// ends and are handed out as one batch, their events in order after the first one's After;
// the tail's own slices are never written to; after another quiet window a batch goes out
// at once again.
func TestHubBatchWindow(t *testing.T) {
	t.Parallel()
	const window = 200 * time.Millisecond
	tail := &hubTail{}
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	h := newHub(tail, 64, window)
	s := hubSession(g)
	h.add(s)
	defer h.remove(s)
	sub := tail.last()

	start := time.Now()
	sub.ch <- batchAt(1)
	waitFor(t, "the first batch", func() bool { return len(s.queuedBatches()) == 1 })
	if d := time.Since(start); d >= window {
		t.Errorf("the first batch after a quiet moment took %v, want it at once", d)
	}
	second := syncmod.Batch{After: 1, Events: []domain.StoredEvent{{Seq: 2}, {Seq: 3}}}
	second.Events = second.Events[:2:2]
	sub.ch <- second
	sub.ch <- batchAt(4)
	sub.ch <- batchAt(5)
	time.Sleep(window / 4)
	if n := len(s.queuedBatches()); n != 1 {
		t.Fatalf("%d batches within the window, want the first only", n)
	}
	waitFor(t, "the merged batch", func() bool { return len(s.queuedBatches()) == 2 })
	if d := time.Since(start); d < window {
		t.Errorf("the merged batch came %v after the first, before the window of %v ended", d, window)
	}
	merged := s.queuedBatches()[1]
	var seqs []int64
	for _, e := range merged.Events {
		seqs = append(seqs, e.Seq)
	}
	if merged.After != 1 || !slices.Equal(seqs, []int64{2, 3, 4, 5}) {
		t.Errorf("merged batch after %d with %v, want after 1 with 2, 3, 4, 5", merged.After, seqs)
	}
	if second.Events[0].Seq != 2 || second.Events[1].Seq != 3 {
		t.Error("the hub wrote into a batch of the tail")
	}

	// A quiet window later, a batch goes out at once again.
	time.Sleep(window + window/2)
	again := time.Now()
	sub.ch <- batchAt(6)
	waitFor(t, "the batch after a quiet window", func() bool { return len(s.queuedBatches()) == 3 })
	if d := time.Since(again); d >= window {
		t.Errorf("the batch after a quiet window took %v, want it at once", d)
	}
}

// promptAt is a batch of one invocation.requested event (a prompt type) with seq.
func promptAt(seq int64) syncmod.Batch {
	return syncmod.Batch{After: seq - 1, Events: []domain.StoredEvent{{Seq: seq, Type: "invocation.requested"}}}
}

// TestHubPromptEndsTheWindow: a batch holding a prompt event (an invocation) goes out at once,
// within a window that would otherwise hold it: merged after the batches held before it, in
// seq order, when the hub holds some; alone when it holds none. The window starts again when
// it goes out, so a plain batch right after it is held.
func TestHubPromptEndsTheWindow(t *testing.T) {
	t.Parallel()
	const window = time.Hour // nothing in this test may wait for it
	tail := &hubTail{}
	g := &Gateway{log: slog.New(slog.DiscardHandler)}
	h := newHub(tail, 64, window)
	s := hubSession(g)
	h.add(s)
	defer h.remove(s)
	sub := tail.last()
	seqsOf := func(b syncmod.Batch) []int64 {
		var seqs []int64
		for _, e := range b.Events {
			seqs = append(seqs, e.Seq)
		}
		return seqs
	}

	sub.ch <- batchAt(1)
	waitFor(t, "the first batch", func() bool { return len(s.queuedBatches()) == 1 })
	sub.ch <- batchAt(2)
	sub.ch <- promptAt(3)
	waitFor(t, "the held batch with the prompt one", func() bool { return len(s.queuedBatches()) == 2 })
	if b := s.queuedBatches()[1]; b.After != 1 || !slices.Equal(seqsOf(b), []int64{2, 3}) {
		t.Errorf("the prompt batch went out after %d with %v, want after 1 with 2, 3", b.After, seqsOf(b))
	}

	sub.ch <- promptAt(4)
	waitFor(t, "a prompt batch while nothing is held", func() bool { return len(s.queuedBatches()) == 3 })
	if b := s.queuedBatches()[2]; b.After != 3 || !slices.Equal(seqsOf(b), []int64{4}) {
		t.Errorf("the prompt batch went out after %d with %v, want after 3 with 4", b.After, seqsOf(b))
	}

	sub.ch <- batchAt(5)
	time.Sleep(100 * time.Millisecond)
	if n := len(s.queuedBatches()); n != 3 {
		t.Errorf("%d batches: a plain batch right after a prompt one went out, want it held for the window", n)
	}
}
