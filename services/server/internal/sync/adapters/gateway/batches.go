package gateway

import (
	"context"
	gosync "sync"

	"github.com/google/uuid"

	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

// sharedBatches is how many recent tail batches the process keeps prepared. Every connection
// that is not behind handles the newest batches, so a few suffice; one that is further
// behind prepares its batch again (one more directory query), which is correct, only slower.
const sharedBatches = 32

// batchKey names one batch of one tail: its After and its last seq.
type batchKey struct{ after, last int64 }

// sharedBatch is one tail batch prepared once for every connection of the process: its
// actors named in one directory query, its event frames encoded at most once per receiver
// kind (agents get trace_context, everyone else the same bytes). Connections only read it.
type sharedBatch struct {
	done   chan struct{} // closed once names, only and err are set
	err    error
	names  map[uuid.UUID]domain.PrincipalRef
	only   map[uuid.UUID]domain.DeliveryOnly
	events []domain.StoredEvent
	once   [2]gosync.Once
	frames [2][][]byte
}

// framesFor returns the event frame of every event of the batch, in order, for a receiver of
// kind, encoding them on the first call for that kind.
func (b *sharedBatch) framesFor(kind domain.ReceiverKind) [][]byte {
	i := 0
	if kind == domain.ReceiverAgent {
		i = 1
	}
	b.once[i].Do(func() {
		envelopes := syncapp.Encode(b.events, b.names, b.only, kind)
		size := 0
		for _, e := range envelopes {
			size += len(e) + len(`{"op":"event","event":}`)
		}
		buf := make([]byte, 0, size)
		frames := make([][]byte, len(envelopes))
		start := 0
		for j, e := range envelopes {
			buf = appendEventFrame(buf, e)
			frames[j] = buf[start:len(buf):len(buf)]
			start = len(buf)
		}
		b.frames[i] = frames
	})
	return b.frames[i]
}

// batchCache holds the sharedBatches most recent prepared batches.
type batchCache struct {
	delivery Delivery
	shared   context.Context // ends when the gateway's Shutdown gives up

	mu   gosync.Mutex
	m    map[batchKey]*sharedBatch
	ring [sharedBatches]batchKey
	next int
}

func newBatchCache(shared context.Context, d Delivery) *batchCache {
	return &batchCache{delivery: d, shared: shared, m: make(map[batchKey]*sharedBatch, sharedBatches)}
}

// get returns b prepared: the first caller names its actors while later callers wait for
// it (or for their ctx). The lookup is not cancelled with the first caller's ctx, since
// others wait for it, only when the gateway's Shutdown gives up. A failed lookup is
// forgotten, so the next caller tries again.
func (c *batchCache) get(ctx context.Context, b syncmod.Batch) (*sharedBatch, error) {
	key := batchKey{after: b.After, last: b.Last()}
	c.mu.Lock()
	sb, ok := c.m[key]
	if !ok {
		sb = &sharedBatch{done: make(chan struct{}), events: b.Events}
		delete(c.m, c.ring[c.next])
		c.ring[c.next] = key
		c.next = (c.next + 1) % sharedBatches
		c.m[key] = sb
	}
	c.mu.Unlock()
	if ok {
		select {
		case <-sb.done:
			return sb, sb.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	lookup, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(c.shared, cancel)
	sb.names, sb.err = c.delivery.Names(lookup, b.Events)
	if sb.err == nil {
		sb.only, sb.err = c.delivery.Only(lookup, b.Events)
	}
	stop()
	cancel()
	close(sb.done)
	if sb.err != nil {
		c.mu.Lock()
		if c.m[key] == sb {
			delete(c.m, key)
		}
		c.mu.Unlock()
	}
	return sb, sb.err
}
