package postgres

import (
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/sync/domain"
)

// maxPrealloc caps the events slice collectEvents allocates up front, so that a caller's large
// limit does not reserve memory a short result never uses.
const maxPrealloc = 1024

// chunkSize is the size of the shared chunks collectEvents copies payloads and trace contexts
// into: a catch-up page of 500 events of about 300 bytes of payload fills three.
const chunkSize = 64 << 10

// spareScans is how many idle page scans (their events slice and chunks) the process keeps
// for the next catch-up pages.
const spareScans = 8

// pageScans keeps idle page scans for reuse, so that a page does not allocate (and clear) its
// events slice and payload chunks again: a page of 500 events holds about 300 KiB of them. A
// bounded free list rather than a sync.Pool, which every garbage collection empties.
var pageScans = make(chan *eventScan, spareScans)

// takeScan returns an idle page scan, or a new one.
func takeScan() *eventScan {
	select {
	case s := <-pageScans:
		return s
	default:
		return newEventScan()
	}
}

// putScan keeps s for the next page unless spareScans are idle already. The events and the
// chunks of its last result are overwritten by the next one.
func putScan(s *eventScan) {
	s.events = s.events[:0]
	s.chunks.reset()
	select {
	case pageScans <- s:
	default:
	}
}

// collectEvents reads every row of events_after.sql or catchup_page.sql (they select the same
// columns) into StoredEvents and closes rows. It allocates little per row, which a page of
// hundreds of rows notices (make bench's catch-up page): the scan targets are one set for
// every row, the payloads and trace contexts are copied into shared chunks (each event's
// slice capped at its own bytes), and a type, resource kind, receive action or correlation id
// equal to one an earlier row had shares that row's string. capHint sizes the slice (the
// statement's limit). The result owns its memory (the log tail hands it to many connections).
func collectEvents(rows pgx.Rows, capHint int) ([]domain.StoredEvent, error) {
	return newEventScan().collect(rows, capHint)
}

// collect is collectEvents into s: the result lives in s's slice and chunks, valid until s is
// reused (putScan).
func (s *eventScan) collect(rows pgx.Rows, capHint int) ([]domain.StoredEvent, error) {
	defer rows.Close()
	out := s.events[:0]
	if want := min(max(capHint, 0), maxPrealloc); cap(out) < want {
		out = make([]domain.StoredEvent, 0, want)
	}
	for rows.Next() {
		if err := rows.Scan(s.dst[:]...); err != nil {
			return nil, err
		}
		out = append(out, s.event())
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.events = out
	return out, nil
}

// eventScan holds the scan targets of one row, reused for every row of a result.
type eventScan struct {
	seq                                     int64
	id, resource                            uuid.UUID
	occurredAt                              time.Time
	actor, space, channel, thread, audience pgtype.UUID
	typ, kind, action, correlation          sharedText
	payload, trace                          chunkedBytes
	redacted                                bool
	chunks                                  chunks
	dst                                     [16]any
	// events is the slice of the last result, reused by a page scan.
	events []domain.StoredEvent
}

func newEventScan() *eventScan {
	s := &eventScan{}
	s.typ.seen = make([]string, 0, 8)
	s.kind.seen = make([]string, 0, 4)
	s.action.seen = make([]string, 0, 4)
	s.correlation.seen = make([]string, 0, 1)
	s.payload.chunks, s.trace.chunks = &s.chunks, &s.chunks
	s.dst = [16]any{&s.seq, &s.id, &s.typ, &s.occurredAt, &s.actor, &s.space, &s.channel, &s.thread,
		&s.kind, &s.resource, &s.audience, &s.action, &s.payload, &s.redacted, &s.correlation, &s.trace}
	return s
}

// event returns the StoredEvent of the row scanned last.
func (s *eventScan) event() domain.StoredEvent {
	return domain.StoredEvent{
		Seq:           s.seq,
		ID:            s.id,
		Type:          s.typ.value,
		OccurredAt:    s.occurredAt.UTC(),
		ActorID:       fromUUID(s.actor),
		SpaceID:       fromUUID(s.space),
		ChannelID:     fromUUID(s.channel),
		ThreadID:      fromUUID(s.thread),
		ResourceKind:  kernel.ResourceKind(s.kind.value),
		ResourceID:    s.resource,
		AudienceID:    fromUUID(s.audience),
		ReceiveAction: kernel.Action(s.action.value),
		Payload:       s.payload.value,
		Redacted:      s.redacted,
		CorrelationID: s.correlation.value,
		TraceContext:  s.trace.value,
	}
}

// sharedText scans a text column (NULL is "") into a string, reusing the string of an earlier
// row with the same text instead of allocating it again: the log's types, resource kinds and
// receive actions come from short registers, and a request's events share its correlation id.
// It remembers at most cap(seen) strings, the first ones it met.
type sharedText struct {
	value string
	seen  []string
}

// ScanBytes implements pgtype.BytesScanner; v is the driver's buffer, valid during the call.
func (t *sharedText) ScanBytes(v []byte) error {
	if v == nil {
		t.value = ""
		return nil
	}
	for i := len(t.seen) - 1; i >= 0; i-- {
		if t.seen[i] == string(v) {
			t.value = t.seen[i]
			return nil
		}
	}
	t.value = string(v)
	if len(t.seen) < cap(t.seen) {
		t.seen = append(t.seen, t.value)
	}
	return nil
}

// chunkedBytes scans a jsonb column (NULL is nil) by copying its text into chunks.
type chunkedBytes struct {
	value  []byte
	chunks *chunks
}

// ScanBytes implements pgtype.BytesScanner; v is the driver's buffer, valid during the call.
func (b *chunkedBytes) ScanBytes(v []byte) error {
	if v == nil {
		b.value = nil
		return nil
	}
	b.value = b.chunks.copyOf(v)
	return nil
}

// chunks hands out copies of byte slices from shared chunks of chunkSize bytes (a larger
// slice gets a chunk of its own), so many small copies cost one allocation per chunk. After
// reset it hands its chunks out again, overwriting what the copies held.
type chunks struct {
	buf   []byte   // the chunk being filled
	used  [][]byte // every chunk filled since the last reset, buf included
	spare [][]byte // chunks of before the last reset, not filled again yet
}

// copyOf returns a copy of v whose capacity ends with it, so that appending to one copy can
// never write into the next.
func (c *chunks) copyOf(v []byte) []byte {
	if len(v) > cap(c.buf)-len(c.buf) {
		c.buf = c.next(len(v))
	}
	start := len(c.buf)
	c.buf = append(c.buf, v...)
	return c.buf[start:len(c.buf):len(c.buf)]
}

// next returns an empty chunk of at least n bytes: a spare one when it is large enough, else a
// new one.
func (c *chunks) next(n int) []byte {
	var b []byte
	for len(c.spare) > 0 && b == nil {
		last := c.spare[len(c.spare)-1]
		c.spare = c.spare[:len(c.spare)-1]
		if cap(last) >= n {
			b = last[:0]
		}
	}
	if b == nil {
		b = make([]byte, 0, max(chunkSize, n))
	}
	c.used = append(c.used, b)
	return b
}

// reset makes every chunk spare again.
func (c *chunks) reset() {
	c.spare = append(c.spare, c.used...)
	c.used = c.used[:0]
	c.buf = nil
}
