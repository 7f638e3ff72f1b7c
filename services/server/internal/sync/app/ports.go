// Package app holds the use cases of the sync module that run inside the process rather than
// behind an HTTP operation: the log tail (one per process, feeding the gateway's live events)
// and the maintenance of the log (partition upkeep). The ports it needs are declared here, from
// its point of view; the PostgreSQL adapters implement them and wire binds them.
package app

import (
	"context"

	"bothy.example.com/server/internal/sync/domain"
)

// EventReader reads the log by seq. The tail relies on the counter-row pattern: a committed
// event with seq s is visible only after every event below s is, so reading "seq > after in
// order" never skips an event that commits later.
type EventReader interface {
	// EventsAfter returns at most limit events with seq > after, in ascending seq order;
	// fewer than limit means the caller reached the head as it stood when the statement
	// ran. Errors are the database's, wrapped.
	EventsAfter(ctx context.Context, after int64, limit int) ([]domain.StoredEvent, error)
}

// HeadReader tells the current head of the log: the event_seq counter, which never moves
// backwards and is not lowered by retention (instance.Versions satisfies it). The tail starts
// there, so a process delivers the events committed after it started.
type HeadReader interface {
	// EventSeq returns the seq of the newest committed event (0 before the first).
	EventSeq(ctx context.Context) (int64, error)
}

// Listener wakes the tail when the head moves, so live events arrive in one round trip
// instead of at the next poll. It is an optimisation only: the tail also polls, so a lost
// notification delays an event, it never loses one.
type Listener interface {
	// Listen connects, subscribes to the log's notifications and then blocks: it calls
	// ready once the subscription is in place, and notify for every notification with the
	// head seq it carries (-1 when the payload is not a number). Both run on the goroutine
	// that called Listen. Listen returns ctx.Err() when ctx ends and any other error when
	// the connection fails or is lost; the tail then calls it again after a backoff.
	Listen(ctx context.Context, ready func(), notify func(head int64)) error
}
