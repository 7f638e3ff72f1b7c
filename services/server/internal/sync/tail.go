package sync

import (
	"errors"
	"strconv"

	"bothy.example.com/server/internal/sync/domain"
)

// Tail is the one reader of the live log per process: it follows the head of sync.event_log
// and hands every committed event, in seq order, to each subscriber. The gateway subscribes
// once per process-wide fan-out (or per connection) instead of every connection polling the
// database; see ADR 0011.
type Tail interface {
	// Subscribe registers a subscriber with room for buffer batches (at least 1) and returns
	// its subscription. Every batch the tail delivers after the call reaches the subscriber,
	// in seq order, until the subscriber closes it, falls behind by more than buffer batches
	// (the subscription then ends with a *LaggedError), or the tail stops (ErrTailStopped).
	// It never blocks; subscribing to a stopped tail returns a subscription that has ended.
	Subscribe(buffer int) Subscription
}

// Subscription is one subscriber's view of the tail.
type Subscription interface {
	// Batches delivers the batches in seq order. It is closed when the subscription ends;
	// Err then says why. Batches and their events are shared by every subscriber: read
	// them, never modify them.
	Batches() <-chan Batch
	// Err is nil while the subscription runs and after the subscriber's own Close; a
	// *LaggedError when the subscriber fell behind; ErrTailStopped when the tail stopped.
	Err() error
	// Close ends the subscription and closes Batches; it is idempotent and safe to call from
	// any goroutine. Batches still buffered are dropped.
	Close()
}

// Batch is a run of events of the log in seq order, delivered by the Tail in one piece.
//
// Batches of one subscription follow each other: a batch's After is the previous batch's
// Last (for the first batch, where the tail stood when the subscriber registered). Between
// After and Last there is no committed event missing, unless retention dropped it before the
// tail read it (then Events[0].Seq > After+1, and a subscriber that needs those seqs must
// fall back to catch-up, which answers resync_required).
type Batch struct {
	// After is the seq the batch follows: everything up to After was delivered before.
	After int64
	// Events are the events with seq > After, ascending and never empty.
	Events []domain.StoredEvent
}

// Last returns the seq of the batch's last event, the subscriber's new position.
func (b Batch) Last() int64 {
	if len(b.Events) == 0 {
		return b.After
	}
	return b.Events[len(b.Events)-1].Seq
}

// ErrTailStopped ends every subscription when the tail's Run returns (the process stops),
// and every subscription made after that.
var ErrTailStopped = errors.New("sync: log tail stopped")

// ErrLagged is matched (errors.Is) by every *LaggedError.
var ErrLagged = errors.New("sync: subscriber lagged")

// LaggedError ends a subscription whose buffer was full when the tail had a batch for it:
// the tail dropped the subscriber instead of waiting for it or buffering without bound. The
// subscriber received every event up to Last and can resume from there with catch-up (the
// log is durable).
type LaggedError struct {
	// Last is the seq of the last event the subscriber was given.
	Last int64
}

// Error says that the subscriber lagged and where it stopped.
func (e *LaggedError) Error() string {
	return "sync: subscriber lagged: its buffer was full; events were delivered up to seq " + strconv.FormatInt(e.Last, 10)
}

// Is makes errors.Is(err, ErrLagged) true for every *LaggedError.
func (e *LaggedError) Is(target error) bool {
	return target == ErrLagged
}
