package sync

import (
	"errors"

	"bothy.example.com/server/internal/kernel/problem"
)

// ResyncError is a cursor that cannot be served: HTTP's 410 resync_required and the gateway's
// resync_required frame. Check carries the state it was decided on. It unwraps to a
// problem.ErrResyncRequired error with the members of the 410 body as problem extensions
// (reason, recovery, retry_after_ms, head_seq, sync_epoch, oldest_seq), so problem.From and
// problem.Declared turn it into the documented response as it is.
type ResyncError struct {
	// Check is the state of the log and the verdict; Check.Reason is never empty.
	Check CheckResult
}

// Err returns nil when the cursor is served (no Reason), else a *ResyncError for r.
func (r CheckResult) Err() error {
	if r.Reason == "" {
		return nil
	}
	return &ResyncError{Check: r}
}

// Error names the reason.
func (e *ResyncError) Error() string {
	return "sync: resync required: " + string(e.Check.Reason)
}

// Unwrap returns the problem error of the 410 (errors.Is(err, problem.ErrResyncRequired)),
// built from Check, so a ResyncError made anywhere carries every member of the body.
func (e *ResyncError) Unwrap() error {
	r := e.Check
	return problem.WithExtensions(
		problem.New(problem.ErrResyncRequired, resyncDetail(r.Reason)),
		map[string]any{
			"reason":         string(r.Reason),
			"recovery":       string(r.Recovery),
			"retry_after_ms": r.RetryAfter.Milliseconds(),
			"head_seq":       r.HeadSeq,
			"sync_epoch":     r.SyncEpoch.String(),
			"oldest_seq":     r.OldestSeq(),
		},
	)
}

// IsResync reports whether err is or wraps a *ResyncError and returns it.
func IsResync(err error) (*ResyncError, bool) {
	var re *ResyncError
	ok := errors.As(err, &re)
	return re, ok
}

// resyncDetail is the client-safe detail of each reason; it names no number (the keys behind
// the limits are the operator's).
func resyncDetail(r ResyncReason) string {
	switch r {
	case ResyncEpochChanged:
		return "The cursor belongs to another sync epoch: the server's data was restored. Load a snapshot."
	case ResyncCursorAhead:
		return "The cursor is ahead of the newest event. Retry later, or load a snapshot if it persists."
	case ResyncRetention:
		return "The cursor is older than the retained events. Load a snapshot."
	case ResyncTooFarBehind:
		return "The cursor is too far behind the newest event; a snapshot is cheaper. Load a snapshot."
	}
	return "The client must rebuild its state from a snapshot."
}
