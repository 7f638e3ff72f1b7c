package gateway

import (
	"errors"
	"fmt"
	gosync "sync"
	"time"

	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// hubBuffer is the hub's own subscription buffer in batches. The hub never waits on a
// connection (it only queues a batch reference and wakes the connection), so it keeps up
// with the tail unless the process is starved; should the tail drop it all the same, every
// connection catches up from its own cursor.
const hubBuffer = 1024

// errLagged: the connection had gateway.send_buffer batches waiting when the hub had
// another; it catches up from its cursor, and is closed with 4005 if that happens again
// within a heartbeat interval.
var errLagged = fmt.Errorf("gateway: connection lagged: %w", syncmod.ErrLagged)

// errHubLagged: the tail dropped the hub itself. Every connection catches up from its
// cursor; it does not count against the connection (no 4005).
var errHubLagged = fmt.Errorf("gateway: hub lagged: %w", syncmod.ErrLagged)

// hub holds the gateway's one subscription to the log tail and hands each batch to every
// live connection: it queues the batch (a reference, shared) on the connection and wakes
// it. A channel per connection would need a goroutine per connection waiting on it; with
// the hub, an idle connection has none but its reader, and its writer runs only while it
// has something to write. The subscription is made when the first connection registers
// and closed when the last one leaves.
type hub struct {
	tail   Tail
	buffer int           // gateway.send_buffer: the most batches a connection may have queued
	window time.Duration // gateway.batch_window: the shortest time between two batches handed out
	// arrived sees the events of every tail batch as it arrives, before the batch window
	// holds it: the gateway ends the sessions whose credential an event ended. Nil: nothing.
	arrived func(events []domain.StoredEvent)

	mu       gosync.Mutex
	sub      syncmod.Subscription // nil while no connection is registered
	sessions map[*session]struct{}
}

func newHub(tail Tail, buffer int, window time.Duration) *hub {
	return &hub{tail: tail, buffer: buffer, window: window, sessions: map[*session]struct{}{}}
}

// add registers s: it gets every batch the hub receives from now on (queued by offer), so a
// connection registered before it reads its head misses nothing after that head.
func (h *hub) add(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sub == nil {
		h.sub = h.tail.Subscribe(hubBuffer)
		go h.run(h.sub)
	}
	h.sessions[s] = struct{}{}
}

// remove unregisters s; the last connection to leave closes the subscription.
func (h *hub) remove(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, s)
	if len(h.sessions) == 0 && h.sub != nil {
		h.sub.Close()
		h.sub = nil
	}
}

// run hands out the batches of sub until it ends; a tail that dropped the hub or stopped
// ends every registered connection's registration with the reason.
//
// A batch goes out at once when the last one went out at least h.window ago; one that comes
// sooner waits, merged with every other batch that comes meanwhile, until the window since
// the last one ended. So the connections get at most one batch per window, each connection
// writes (and its peer reads) once per window however many events arrived in it, and a
// lone event after a quiet moment waits for nothing. The merged batch holds the events of
// its parts in order: each tail batch starts where the one before it ended. A batch with a
// prompt event (an invocation, domain.Prompt) waits for nothing either: it goes out at once,
// after whatever is held (spec 03, "Live batching"), and the next window starts then.
func (h *hub) run(sub syncmod.Subscription) {
	var (
		held    syncmod.Batch // the batches waiting for the window's end, merged
		holding bool          // held has at least one batch
		owned   bool          // held.Events is the hub's own slice (not the tail's, shared)
		last    time.Time     // when the hub last handed out a batch
		timer   *time.Timer
		due     <-chan time.Time // the window's end while holding, else nil
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	batches := sub.Batches()
	for {
		select {
		case b, ok := <-batches:
			if !ok {
				if holding && !h.hand(sub, held) {
					return
				}
				h.end(sub)
				return
			}
			if h.arrived != nil {
				h.arrived(b.Events)
			}
			if holding {
				if !owned {
					held.Events = append(make([]domain.StoredEvent, 0, 2*(len(held.Events)+len(b.Events))), held.Events...)
					owned = true
				}
				held.Events = append(held.Events, b.Events...)
				if !hasPrompt(b) {
					continue
				}
				// Someone waits on it: what is held goes out now, the prompt event last.
				timer.Stop()
				due = nil
				if !h.hand(sub, held) {
					return
				}
				held, holding, owned = syncmod.Batch{}, false, false
				last = time.Now()
				continue
			}
			wait := h.window - time.Since(last)
			if wait <= 0 || hasPrompt(b) {
				if !h.hand(sub, b) {
					return
				}
				last = time.Now()
				continue
			}
			held, holding, owned = b, true, false
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			due = timer.C
		case <-due:
			due = nil
			if !h.hand(sub, held) {
				return
			}
			held, holding, owned = syncmod.Batch{}, false, false
			last = time.Now()
		}
	}
}

// hasPrompt reports whether b holds an event its audience waits on (domain.Prompt).
func hasPrompt(b syncmod.Batch) bool {
	for i := range b.Events {
		if domain.Prompt(b.Events[i].Type) {
			return true
		}
	}
	return false
}

// hand queues b on every registered connection; false when sub is no longer the hub's (closed
// by remove: what it still had belongs to no one).
func (h *hub) hand(sub syncmod.Subscription, b syncmod.Batch) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sub != sub {
		return false
	}
	for s := range h.sessions {
		if !s.offer(b, h.buffer) {
			delete(h.sessions, s)
		}
	}
	return true
}

// end ends the registration of every connection with the reason sub ended for.
func (h *hub) end(sub syncmod.Subscription) {
	err := sub.Err()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sub != sub {
		return
	}
	h.sub = nil
	if errors.Is(err, syncmod.ErrLagged) {
		err = errHubLagged
	}
	for s := range h.sessions {
		s.lose(err)
	}
	clear(h.sessions)
}
