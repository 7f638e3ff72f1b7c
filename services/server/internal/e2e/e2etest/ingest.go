package e2etest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// IngestEvent is a catch-up envelope as far as these tests read it.
type IngestEvent struct {
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Actor struct {
		ID     uuid.UUID `json:"id"`
		Kind   string    `json:"kind"`
		Handle string    `json:"handle"`
	} `json:"actor"`
	ChannelID uuid.UUID       `json:"channel_id"`
	ThreadID  uuid.UUID       `json:"thread_id"`
	Payload   json.RawMessage `json:"payload"`
	Raw       string
}

// IngestCatchUp pages through GET /api/v1/events as a from after to the head, as a client catching
// up does, and returns the events it was given.
func (w *ChatWorld) IngestCatchUp(t *testing.T, a Actor, after int64) []IngestEvent {
	t.Helper()
	var out []IngestEvent
	for range 10000 {
		var page struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor int64             `json:"next_cursor"`
			HeadSeq    int64             `json:"head_seq"`
		}
		w.Must(t, a, http.MethodGet, fmt.Sprintf("/api/v1/events?after=%d&limit=500", after), "", http.StatusOK, &page)
		for _, raw := range page.Events {
			var e IngestEvent
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("event %s: %v", raw, err)
			}
			e.Raw = string(raw)
			out = append(out, e)
		}
		if page.NextCursor >= page.HeadSeq {
			return out
		}
		after = page.NextCursor
	}
	t.Fatal("catch-up did not reach the head")
	return nil
}

// IngestThreadOf lists, as Alex, the messages of the thread of pull request n.
func (w *ChatWorld) IngestThreadOf(t *testing.T, repo string, n int) []json.RawMessage {
	t.Helper()
	var thread uuid.UUID
	for _, e := range w.IngestCatchUp(t, w.Alex, 0) {
		if e.Type != "message.created" {
			continue
		}
		var p struct {
			ContentMD string `json:"content_md"`
			Seq       int64  `json:"seq"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		if p.Seq == 1 && strings.HasPrefix(p.ContentMD, fmt.Sprintf("**Pull request #%d**", n)) {
			thread = e.ThreadID
		}
	}
	if thread == uuid.Nil {
		t.Fatalf("no thread of pull request #%d of %s", n, repo)
	}
	return w.ingestMessages(t, thread)
}

// IngestThreads lists, as Alex, the messages of every thread the events name.
func (w *ChatWorld) IngestThreads(t *testing.T, events []IngestEvent) [][]json.RawMessage {
	t.Helper()
	seen := map[uuid.UUID]bool{}
	var out [][]json.RawMessage
	for _, e := range events {
		if e.ThreadID != uuid.Nil && !seen[e.ThreadID] {
			seen[e.ThreadID] = true
			out = append(out, w.ingestMessages(t, e.ThreadID))
		}
	}
	return out
}

// ingestMessages lists every message of a thread as Alex, raw.
func (w *ChatWorld) ingestMessages(t *testing.T, thread uuid.UUID) []json.RawMessage {
	t.Helper()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/threads/"+thread.String()+"/messages?limit=100", "", http.StatusOK, &list)
	return list.Items
}

// IngestContent joins raw messages for searching.
func (w *ChatWorld) IngestContent(t *testing.T, msgs []json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	for _, m := range msgs {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}
