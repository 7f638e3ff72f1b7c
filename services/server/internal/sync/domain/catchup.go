package domain

import (
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Reason says why a cursor cannot be served (spec 03, resync_required); the empty Reason means
// it can. The client then drops its cursor and recovers as Recovery says.
type Reason string

// The reasons of spec 03, in the order ResyncReason checks them.
const (
	// ReasonNone means the cursor is served.
	ReasonNone Reason = ""
	// ReasonEpochChanged means the cursor was issued under another sync epoch: the database
	// was restored from a backup, so seqs of the old epoch name other events now.
	ReasonEpochChanged Reason = "epoch_changed"
	// ReasonCursorAhead means the cursor is beyond the head: a client bug, or a cursor read
	// from a server that was ahead of this one. No data is known to be lost.
	ReasonCursorAhead Reason = "cursor_ahead"
	// ReasonRetention means retention dropped events the client has not seen.
	ReasonRetention Reason = "retention"
	// ReasonTooFarBehind means the cursor is more than sync.catchup_max_events behind the
	// head: a snapshot is cheaper than the catch-up.
	ReasonTooFarBehind Reason = "too_far_behind"
)

// Reasons returns every reason but ReasonNone, in the order ResyncReason checks them.
func Reasons() []Reason {
	return []Reason{ReasonEpochChanged, ReasonCursorAhead, ReasonRetention, ReasonTooFarBehind}
}

// Recovery tells a client what to do after a resync_required (spec 03, "Beyond the usual").
type Recovery string

// The recoveries.
const (
	// RecoveryNone belongs to ReasonNone: nothing to recover.
	RecoveryNone Recovery = ""
	// RecoverySnapshot means: load a snapshot and continue from its head_seq.
	RecoverySnapshot Recovery = "snapshot"
	// RecoveryRetry means: try the same cursor again after retry_after_ms; load a snapshot if
	// it keeps failing.
	RecoveryRetry Recovery = "retry"
)

// Recovery returns what a client does about r: retry for cursor_ahead, which usually means a
// lagging replica or a client bug rather than lost data; a snapshot for every other reason;
// nothing for ReasonNone.
func (r Reason) Recovery() Recovery {
	switch r {
	case ReasonNone:
		return RecoveryNone
	case ReasonCursorAhead:
		return RecoveryRetry
	}
	return RecoverySnapshot
}

// CursorEpoch is the sync epoch a client names with its cursor: the epoch query parameter of
// catch-up, the epoch member of the gateway's resume frame. The zero value is "none given".
// Any UUID a client gives counts, the nil UUID included: it is not the instance's epoch, so
// its cursor is epoch_changed like every other foreign one, on both transports alike.
type CursorEpoch struct {
	// ID is the epoch the client named; meaningless unless Given.
	ID uuid.UUID
	// Given reports whether the client named an epoch at all.
	Given bool
}

// EpochOf is the CursorEpoch of a client that named id.
func EpochOf(id uuid.UUID) CursorEpoch {
	return CursorEpoch{ID: id, Given: true}
}

// ResyncReason decides whether a client with cursor after, issued under sync epoch epoch
// (the zero CursorEpoch when the client sent none), can catch up, given the head of the log (the event_seq
// counter, never max(seq)), the lowest seq still retained (head + 1 for an empty log), the
// instance's current sync epoch and sync.catchup_max_events. The first match wins (spec 03):
//
//  1. epoch given and not current: ReasonEpochChanged;
//  2. after > head: ReasonCursorAhead (without an epoch, the second safety net);
//  3. after < minRetained - 1: ReasonRetention (after == minRetained - 1 is served: the
//     client has seen every seq below the first one retained);
//  4. head - after > maxEvents: ReasonTooFarBehind.
//
// Otherwise ReasonNone.
func ResyncReason(after int64, epoch CursorEpoch, head, minRetained int64, current uuid.UUID, maxEvents int64) Reason {
	switch {
	case epoch.Given && epoch.ID != current:
		return ReasonEpochChanged
	case after > head:
		return ReasonCursorAhead
	case after < minRetained-1:
		return ReasonRetention
	case head-after > maxEvents:
		return ReasonTooFarBehind
	}
	return ReasonNone
}

// ScanEnd returns the last seq one catch-up page may look at: after + window (the key
// sync.catchup_scan_window), but never beyond head. It bounds the rows a page reads whatever
// the reader may see, so a reader who sees one channel pays per page what a reader who sees
// everything pays. A window below 1 counts as 1; an after at or beyond head scans nothing
// (the result is after). The sum saturates instead of overflowing.
func ScanEnd(after, head, window int64) int64 {
	if after >= head {
		return after
	}
	window = max(window, 1)
	if after > math.MaxInt64-window {
		return head
	}
	return min(head, after+window)
}

// NextCursor returns the cursor after one catch-up page: the last seq checked, never the last
// delivered (spec 03, rule 4 with the scan window). The page's query read rows rows of at most
// limit, the last of them with seq lastSeq, from the seqs after+1 .. scanEnd. A full page
// (rows == limit) ends at lastSeq: seqs after it were not checked. A short page checked the
// whole window, so it ends at scanEnd, which is head when the window reaches the head. Rows
// that authorize or the audience rule dropped count as checked all the same, so invisible
// ranges are passed over. The result is kept within after .. head.
func NextCursor(after, head, scanEnd int64, rows, limit int, lastSeq int64) int64 {
	next := scanEnd
	if limit > 0 && rows >= limit {
		next = lastSeq
	}
	return min(max(next, after), max(head, after))
}

// PageLimit returns the number of events one page may hold: requested, capped to pageSize
// (the key sync.catchup_page_size), and pageSize when requested is below 1 (spec 05,
// pagination: larger values are capped, never an error).
func PageLimit(requested, pageSize int) int {
	if requested < 1 || requested > pageSize {
		return pageSize
	}
	return requested
}

// RetryAfter returns how long a client waits before it acts on reason: base (the key
// sync.resync_retry_base) with a jitter of plus or minus half of it, from u, a uniform draw
// in [0, 1) (clamped into it), so that a thousand clients told at once do not come back at
// once. ReasonNone and a base of 0 or less give 0.
func RetryAfter(reason Reason, base time.Duration, u float64) time.Duration {
	if reason == ReasonNone || base <= 0 {
		return 0
	}
	u = min(max(u, 0), math.Nextafter(1, 0))
	return base/2 + time.Duration(u*float64(base))
}

// Prefilter is the SQL prefilter of one catch-up page for one reader (spec 03, Page, rule 2):
// the rows worth authorizing, taken from the reader's Scope. It only narrows the rows for
// speed; the per-row decision (the audience rule, then authorize) is the truth. Match states
// the same predicate in Go, for fakes and for the tests that hold the SQL to it.
type Prefilter struct {
	// PrincipalID is the reader: its own personal events pass.
	PrincipalID uuid.UUID
	// InstanceWide is true for an owner or a holder of an instance grant: every non-personal
	// event passes.
	InstanceWide bool
	// ChannelIDs are the channels the reader holds a grant on (direct messages included).
	ChannelIDs []uuid.UUID
	// FullyVisibleSpaceIDs are the spaces the reader holds a grant on: every event placed in
	// them passes, also those of channels created after the reader's Scope was built.
	FullyVisibleSpaceIDs []uuid.UUID
	// VisibleSpaceIDs are the spaces the reader sees (a grant on the space or on one of its
	// channels): their own events (no channel) pass.
	VisibleSpaceIDs []uuid.UUID
}

// Match reports whether e passes the prefilter: a personal event when its audience is the
// reader; any other event when the reader is instance-wide, or it lies in a channel of
// ChannelIDs or a space of FullyVisibleSpaceIDs, or it belongs to a space of VisibleSpaceIDs
// without a channel, or it has no placement at all.
func (f Prefilter) Match(e StoredEvent) bool {
	if e.Personal() {
		return e.AudienceID == f.PrincipalID
	}
	switch {
	case f.InstanceWide:
		return true
	case e.ChannelID != uuid.Nil && slices.Contains(f.ChannelIDs, e.ChannelID):
		return true
	case e.SpaceID != uuid.Nil && slices.Contains(f.FullyVisibleSpaceIDs, e.SpaceID):
		return true
	case e.ChannelID == uuid.Nil && e.SpaceID != uuid.Nil:
		return slices.Contains(f.VisibleSpaceIDs, e.SpaceID)
	}
	return e.ChannelID == uuid.Nil && e.SpaceID == uuid.Nil
}

// PageQuery is one catch-up page's read of the log: at most Limit events with
// After < seq <= Through (the end of the scan window) that pass Filter, in seq order.
type PageQuery struct {
	// After is the reader's cursor.
	After int64
	// Through is the last seq the page may read: ScanEnd of After, the head and the window.
	Through int64
	// Limit is the most rows the page reads, at least 1.
	Limit int
	// Filter is the reader's prefilter.
	Filter Prefilter
}

// PageRows is what a catch-up page read from the log.
type PageRows struct {
	// Events are the rows that passed the prefilter, in seq order, at most the query's Limit.
	Events []StoredEvent
	// HorizonSeq is the retention horizon (the highest seq retention ever dropped) as it
	// stood once the rows were read: when it is beyond the page's After, retention overtook
	// the reader while it paged and the page may miss events.
	HorizonSeq int64
	// Release, when not nil, hands the memory of Events (the slice and the bytes its payloads
	// and strings point into) back to the reader for its next page. Call it once, after the
	// last use of Events and of everything taken from them without a copy; a caller that never
	// calls it only forgoes the reuse.
	Release func()
}
