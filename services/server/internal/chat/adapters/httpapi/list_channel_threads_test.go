package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/problem"
)

// visitThreads writes resp as the strict server would and returns the recorder.
func visitThreads(t *testing.T, resp apigen.ListChannelThreadsResponseObject) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := resp.VisitListChannelThreadsResponse(rec); err != nil {
		t.Fatalf("visit: %v", err)
	}
	return rec
}

// TestListChannelThreadsCursorRoundTrip: the next_cursor of a full page names the position of
// its last thread, and passed back it reaches the use case as that position, to the
// microsecond; the limit is handed over as given (the use case caps it).
func TestListChannelThreadsCursorRoundTrip(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	last := chat.ThreadSummary{Thread: chat.Thread{ID: threadID, ChannelID: channelID, LastMessageSeq: 3}, LastMessageAt: later.Add(123 * time.Microsecond)}
	ports.threadPage = chat.ThreadPage{Items: []chat.ThreadSummary{last}, Next: last.Position()}
	resp, err := s.ListChannelThreads(as(samID), apigen.ListChannelThreadsRequestObject{ChannelId: channelID, Params: apigen.ListChannelThreadsParams{Limit: ptr(1)}})
	if err != nil {
		t.Fatalf("ListChannelThreads: %v", err)
	}
	if ports.id != channelID || !ports.position.IsZero() || ports.limit != 1 {
		t.Fatalf("use case got channel %s, position %+v, limit %d", ports.id, ports.position, ports.limit)
	}
	rec := visitThreads(t, resp)
	var body apigen.ThreadSummaryList
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.NextCursor == nil || len(body.Items) != 1 || body.Items[0].ReplyCount != 2 || body.Items[0].SpaceId != nil {
		t.Fatalf("body %s", rec.Body)
	}
	if rec.Header().Get("ETag") == "" || rec.Header().Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("headers %v", rec.Header())
	}

	ports.threadPage = chat.ThreadPage{Items: []chat.ThreadSummary{}}
	resp, err = s.ListChannelThreads(as(samID), apigen.ListChannelThreadsRequestObject{ChannelId: channelID, Params: apigen.ListChannelThreadsParams{Cursor: body.NextCursor}})
	if err != nil {
		t.Fatalf("ListChannelThreads with the cursor: %v", err)
	}
	if ports.position != last.Position() {
		t.Fatalf("the cursor came back as %+v, want %+v", ports.position, last.Position())
	}
	if rec := visitThreads(t, resp); rec.Body.String() != "{\"items\":[]}\n" {
		t.Fatalf("the last page %q, want items [] and no next_cursor", rec.Body)
	}
}

// TestListChannelThreadsRefusesForeignCursors: a cursor the server did not write is a 400
// naming cursor, before the use case runs.
func TestListChannelThreadsRefusesForeignCursors(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"garbage!", "AAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", uuid.NewString()} {
		s, _, ports := newServer(t)
		resp, err := s.ListChannelThreads(as(samID), apigen.ListChannelThreadsRequestObject{ChannelId: channelID, Params: apigen.ListChannelThreadsParams{Cursor: &c}})
		p := problem.From(context.Background(), err)
		if resp != nil || p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != "cursor" {
			t.Errorf("cursor %q: resp %v, err %v; want validation_failed naming cursor", c, resp, err)
		}
		if len(ports.calls) != 0 {
			t.Errorf("cursor %q: the use case ran (%v)", c, ports.calls)
		}
	}
}

// TestListChannelThreadsNotModified: If-None-Match with the page's tag is a 304 with the tag
// and no body; another tag gets the page.
func TestListChannelThreadsNotModified(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.threadPage = chat.ThreadPage{Items: []chat.ThreadSummary{}}
	req := apigen.ListChannelThreadsRequestObject{ChannelId: channelID}
	resp, err := s.ListChannelThreads(as(samID), req)
	if err != nil {
		t.Fatal(err)
	}
	tag := visitThreads(t, resp).Header().Get("ETag")
	req.Params.IfNoneMatch = &tag
	resp, err = s.ListChannelThreads(as(samID), req)
	if err != nil {
		t.Fatal(err)
	}
	if rec := visitThreads(t, resp); rec.Code != 304 || rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
		t.Fatalf("If-None-Match %s: %d %q %v", tag, rec.Code, rec.Body, rec.Header())
	}
	other := `"other"`
	req.Params.IfNoneMatch = &other
	resp, err = s.ListChannelThreads(as(samID), req)
	if err != nil {
		t.Fatal(err)
	}
	if rec := visitThreads(t, resp); rec.Code != 200 {
		t.Fatalf("If-None-Match of another tag: %d", rec.Code)
	}
}
