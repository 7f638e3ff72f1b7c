package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// within bounds every wait of these tests; reaching it is a failure, never a pass.
const within = 10 * time.Second

var errDown = errors.New("database is down")

// fakeLog is the log behind the EventReader and HeadReader ports: seq n sits at index n-1.
// Every EventsAfter call is recorded in calls (its after argument), so tests can count reads.
type fakeLog struct {
	mu        sync.Mutex
	events    []domain.StoredEvent
	failReads int  // the next failReads EventsAfter calls fail
	failHeads int  // the next failHeads EventSeq calls fail
	swap      bool // EventsAfter returns its events in the wrong order
	calls     chan int64
}

func newFakeLog() *fakeLog {
	return &fakeLog{calls: make(chan int64, 10_000)}
}

// append commits n events and returns the new head.
func (f *fakeLog) append(n int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.events = append(f.events, domain.StoredEvent{Seq: int64(len(f.events) + 1), Type: "message.created"})
	}
	return int64(len(f.events))
}

func (f *fakeLog) EventsAfter(_ context.Context, after int64, limit int) ([]domain.StoredEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls <- after
	if f.failReads > 0 {
		f.failReads--
		return nil, errDown
	}
	lo := min(max(after, 0), int64(len(f.events)))
	hi := min(lo+int64(limit), int64(len(f.events)))
	out := append([]domain.StoredEvent(nil), f.events[lo:hi]...)
	if f.swap && len(out) > 1 {
		out[0], out[1] = out[1], out[0]
	}
	return out, nil
}

func (f *fakeLog) EventSeq(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failHeads > 0 {
		f.failHeads--
		return 0, errDown
	}
	return int64(len(f.events)), nil
}

// reads returns how many EventsAfter calls were made so far, consuming the record.
func (f *fakeLog) reads() int {
	n := 0
	for {
		select {
		case <-f.calls:
			n++
		default:
			return n
		}
	}
}

// fakeListener is the Listener port: a session per Listen call that delivers what the test
// sends on notes, ends with what it sends on drops, and announces itself on connected.
type fakeListener struct {
	mu           sync.Mutex
	failConnects int // the next failConnects Listen calls fail at once
	listens      int
	notes        chan int64
	drops        chan error
	connected    chan struct{}
}

func newFakeListener() *fakeListener {
	return &fakeListener{
		notes:     make(chan int64),
		drops:     make(chan error),
		connected: make(chan struct{}, 100),
	}
}

func (l *fakeListener) Listen(ctx context.Context, ready func(), notify func(int64)) error {
	l.mu.Lock()
	l.listens++
	if l.failConnects > 0 {
		l.failConnects--
		l.mu.Unlock()
		return errDown
	}
	l.mu.Unlock()
	ready()
	l.connected <- struct{}{}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-l.drops:
			return err
		case h := <-l.notes:
			notify(h)
		}
	}
}

// send delivers one notification through the connected session.
func (l *fakeListener) send(t *testing.T, head int64) {
	t.Helper()
	select {
	case l.notes <- head:
	case <-time.After(within):
		t.Fatalf("no listener session took the notification %d", head)
	}
}

func (l *fakeListener) drop(t *testing.T, err error) {
	t.Helper()
	select {
	case l.drops <- err:
	case <-time.After(within):
		t.Fatal("no listener session to drop")
	}
}

func (l *fakeListener) waitConnected(t *testing.T) {
	t.Helper()
	select {
	case <-l.connected:
	case <-time.After(within):
		t.Fatal("the listener did not connect")
	}
}

// newTail builds a tail; cfg's zero fields get test values (a poll interval of an hour, so
// only notifications wake it unless a test says otherwise).
func newTail(t *testing.T, log *fakeLog, l app.Listener, cfg app.TailConfig) *app.Tail {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Hour
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 3
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase, cfg.RetryCap = time.Millisecond, 4*time.Millisecond
	}
	var listener app.Listener
	if fl, ok := l.(*fakeListener); ok && fl != nil {
		listener = fl
	}
	tail, err := app.NewTail(log, log, listener, cfg)
	if err != nil {
		t.Fatalf("NewTail: %v", err)
	}
	return tail
}

// run starts tail.Run and returns a stop function that cancels it and returns Run's result;
// the test's cleanup stops it too.
func run(t *testing.T, tail *app.Tail) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tail.Run(ctx) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(within):
				t.Errorf("Run did not return within %v of its cancellation", within)
			}
		})
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func waitReady(t *testing.T, tail *app.Tail) {
	t.Helper()
	select {
	case <-tail.Ready():
	case <-time.After(within):
		t.Fatal("the tail did not read its head")
	}
}

// collect reads sub until it has seen seq until and returns every seq seen, checking that
// batches follow each other (After is the previous Last) and seqs ascend.
func collect(t *testing.T, sub syncmod.Subscription, after, until int64) []int64 {
	t.Helper()
	var seqs []int64
	last := after
	for last < until {
		select {
		case b, ok := <-sub.Batches():
			if !ok {
				t.Fatalf("subscription ended at %d before %d: %v", last, until, sub.Err())
			}
			if b.After != last {
				t.Fatalf("batch after %d follows %d: a gap or an overlap", b.After, last)
			}
			if len(b.Events) == 0 {
				t.Fatal("empty batch")
			}
			for _, e := range b.Events {
				if e.Seq <= last {
					t.Fatalf("seq %d after %d", e.Seq, last)
				}
				last = e.Seq
				seqs = append(seqs, e.Seq)
			}
			if b.Last() != last {
				t.Fatalf("Batch.Last = %d, want %d", b.Last(), last)
			}
		case <-time.After(within):
			t.Fatalf("no batch within %v; got up to %d, want %d", within, last, until)
		}
	}
	return seqs
}

// seqRange returns lo..hi.
func seqRange(lo, hi int64) []int64 {
	var out []int64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}
