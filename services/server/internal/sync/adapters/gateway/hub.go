package gateway

import (
	"errors"
	"fmt"
	gosync "sync"

	syncmod "bothy.example.com/server/internal/sync"
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
	buffer int // gateway.send_buffer: the most batches a connection may have queued

	mu       gosync.Mutex
	sub      syncmod.Subscription // nil while no connection is registered
	sessions map[*session]struct{}
}

func newHub(tail Tail, buffer int) *hub {
	return &hub{tail: tail, buffer: buffer, sessions: map[*session]struct{}{}}
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
func (h *hub) run(sub syncmod.Subscription) {
	for b := range sub.Batches() {
		h.mu.Lock()
		if h.sub != sub {
			// Closed by remove: what it still buffered belongs to no one.
			h.mu.Unlock()
			return
		}
		for s := range h.sessions {
			if !s.offer(b, h.buffer) {
				delete(h.sessions, s)
			}
		}
		h.mu.Unlock()
	}
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
