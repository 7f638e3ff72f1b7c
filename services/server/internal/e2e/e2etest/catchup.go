package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// The integration tests of catch-up (GET /api/v1/events, spec 03 "Catch-up").

// PostPattern posts one message per character of pattern, S into the Support thread and M
// into the Marketing thread, as the owner.
func (w *SyncWorld) PostPattern(t *testing.T, pattern string) {
	t.Helper()
	for i, c := range pattern {
		switch c {
		case 'S':
			w.Post(t, w.Owner, w.TicketThread, fmt.Sprintf("Support note %d", i))
		case 'M':
			w.Post(t, w.Owner, w.CampaignThread, fmt.Sprintf("Marketing note %d", i))
		default:
			t.Fatalf("pattern %q: unknown %q", pattern, c)
		}
	}
}

// GoneBody is the body of a 410 resync_required.
type GoneBody struct {
	Code         string    `json:"code"`
	Status       int       `json:"status"`
	Reason       string    `json:"reason"`
	Recovery     string    `json:"recovery"`
	RetryAfterMS int64     `json:"retry_after_ms"`
	HeadSeq      int64     `json:"head_seq"`
	SyncEpoch    uuid.UUID `json:"sync_epoch"`
	OldestSeq    int64     `json:"oldest_seq"`
}

// RequireResync sends ListEvents as a and fails unless it answers 410 resync_required with the
// reason, its recovery, a retry_after_ms within sync.resync_retry_base (its default, 1s) plus
// or minus half, the current head_seq and sync_epoch, the oldest_seq given, and Cache-Control
// private, no-store.
func (w *SyncWorld) RequireResync(t *testing.T, a Actor, after int64, epoch, reason string, oldest int64) GoneBody {
	t.Helper()
	r := w.ListEvents(t, a, after, 0, epoch)
	r.RequireProblem(t, http.StatusGone, "resync_required")
	var members map[string]json.RawMessage
	r.JSON(t, &members)
	for _, m := range []string{"reason", "recovery", "retry_after_ms", "head_seq", "sync_epoch", "oldest_seq"} {
		if _, ok := members[m]; !ok {
			t.Fatalf("the 410 lacks %s: %s", m, r.Body)
		}
	}
	var g GoneBody
	r.JSON(t, &g)
	recovery := "snapshot"
	if reason == "cursor_ahead" {
		recovery = "retry"
	}
	if g.Reason != reason || g.Recovery != recovery || g.HeadSeq != w.Head(t) || g.SyncEpoch != w.Epoch(t) || g.OldestSeq != oldest {
		t.Fatalf("after %d epoch %q: 410 %+v, want reason %s, recovery %s, head %d, epoch %s, oldest %d",
			after, epoch, g, reason, recovery, w.Head(t), w.Epoch(t), oldest)
	}
	if g.RetryAfterMS < 500 || g.RetryAfterMS > 1500 {
		t.Fatalf("retry_after_ms = %d, want sync.resync_retry_base (1000ms) plus or minus half", g.RetryAfterMS)
	}
	return g
}
