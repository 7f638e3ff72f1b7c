package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/wiretest"
)

// Contract fidelity (spec 05): what a client generated from api/openapi.yaml relies on. Every
// REST answer below goes through the validating client (wiretest.Validate); gateway frames are
// checked against the document's schemas with wiretest.ValidateSchema.

// RawEvent is an envelope with its actor and payload kept raw, for comparing strings.
type RawEvent struct {
	Seq        int64                      `json:"seq"`
	Type       string                     `json:"type"`
	Actor      map[string]json.RawMessage `json:"actor"`
	ResourceID struct {
		ID uuid.UUID `json:"id"`
	} `json:"resource"`
	Payload map[string]json.RawMessage `json:"payload"`
	// Raw is the envelope as received, never decoded into.
	Raw json.RawMessage `json:"-"`
}

// RestEnvelopes catches a up from after to the head over REST (validated page by page) and
// returns the envelopes.
func (w *ChatWorld) RestEnvelopes(t *testing.T, a Actor, after int64) []RawEvent {
	t.Helper()
	head := w.Head(t)
	var out []RawEvent
	for after < head {
		var page struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor int64             `json:"next_cursor"`
		}
		w.Must(t, a, http.MethodGet, EventsPath(after, 0, ""), "", http.StatusOK, &page)
		for _, raw := range page.Events {
			var e RawEvent
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("envelope %s: %v", raw, err)
			}
			e.Raw = raw
			out = append(out, e)
		}
		if page.NextCursor <= after {
			t.Fatalf("catch-up stuck at %d", after)
		}
		after = page.NextCursor
	}
	return out
}

// GatewayEnvelopes resumes a on the gateway from after and returns the envelopes up to the
// head, each checked against the document's Event schema.
func (w *ChatWorld) GatewayEnvelopes(t *testing.T, a Actor, after int64) []RawEvent {
	t.Helper()
	head := w.Head(t)
	c := MustDial(t, w.Env.Server.URL, a.Token)
	c.Send(fmt.Sprintf(`{"op":"resume","after":%d}`, after))
	var out []RawEvent
	for {
		f := c.Next()
		switch f.Op {
		case "event":
			if err := wiretest.ValidateSchema("Event", f.Event); err != nil {
				t.Fatalf("gateway event %s breaks the API's Event schema: %v", f.Event, err)
			}
			var e RawEvent
			if err := json.Unmarshal(f.Event, &e); err != nil {
				t.Fatal(err)
			}
			e.Raw = f.Event
			out = append(out, e)
		case "cursor", "heartbeat":
		case "catchup.complete":
			if f.Cursor != head {
				t.Fatalf("catchup.complete at %d, want %d", f.Cursor, head)
			}
			return out
		default:
			t.Fatalf("frame %s during resume", f.Raw)
		}
	}
}
