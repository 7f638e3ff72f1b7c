package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/conditional"
	"bothy.example.com/server/internal/kernel/problem"
)

// ListChannelThreads returns one page of the threads of the channel of the path, most recent
// activity first; the use case authorizes thread.read on the channel once loaded (404 for a
// channel the actor may not see) and caps the limit (chat.threads_page_size). A cursor this
// server did not write is a 400 naming cursor. The answer carries an ETag of its body and
// Cache-Control: private, no-cache; an If-None-Match naming the tag gets 304 without a body.
func (s *Server) ListChannelThreads(ctx context.Context, req apigen.ListChannelThreadsRequestObject) (apigen.ListChannelThreadsResponseObject, error) {
	var after chat.ThreadPosition
	if req.Params.Cursor != nil {
		var ok bool
		if after, ok = parseThreadCursor(*req.Params.Cursor); !ok {
			return nil, problem.Validation(problem.FieldError{Field: "cursor", Message: "is not a cursor of this list"})
		}
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	page, err := s.list.InChannel(ctx, req.ChannelId, after, limit)
	if err != nil {
		return nil, err
	}
	buf := threadPageBuffers.Get().(*[]byte)
	body, err := AppendThreadSummaryList((*buf)[:0], toAPIThreadPage(page))
	if err != nil {
		threadPageBuffers.Put(buf)
		return nil, err
	}
	// The final newline of json.Encoder, which wrote this body before it was hand-written.
	*buf = append(body, '\n')
	tag := conditional.Tag(*buf)
	if conditional.NotModified(req.Params.IfNoneMatch, tag) {
		threadPageBuffers.Put(buf)
		return threadsNotModified{etag: tag}, nil
	}
	return threadsBody{body: buf, etag: tag}, nil
}

// threadPageBuffers keeps the buffers listChannelThreads encodes its pages into from one
// request to the next: a page of 50 threads is about 32 KB, a quarter of the bytes the request
// allocated, and a client polls the list. A buffer goes back once the page is written (or not
// sent at all); one grown past maxPooledPage is left to the collector.
var threadPageBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPage bounds the buffers threadPageBuffers keeps, so that one page of long titles
// and excerpts does not pin its memory for the process's life.
const maxPooledPage = 256 << 10

// pollCacheControl lets a private cache keep a polled list but makes it ask (If-None-Match)
// before every use: the list changes with every post and every read of the actor.
const pollCacheControl = "private, no-cache"

// threadsBody is the 200 of listChannelThreads: the body encoded once (AppendThreadSummaryList),
// for its ETag and to send, as the generated response would encode it (with json.Encoder's
// final newline), in a buffer of threadPageBuffers.
type threadsBody struct {
	body *[]byte
	etag string
}

// VisitListChannelThreadsResponse implements apigen.ListChannelThreadsResponseObject: it
// writes the body, then returns its buffer to threadPageBuffers (a Write never keeps the slice
// it is given, io.Writer's rule, so the buffer is free once Write returns).
func (b threadsBody) VisitListChannelThreadsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", pollCacheControl)
	w.Header().Set("ETag", b.etag)
	w.Header().Set("Content-Length", strconv.Itoa(len(*b.body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(*b.body)
	if cap(*b.body) <= maxPooledPage {
		threadPageBuffers.Put(b.body)
	}
	return err
}

// threadsNotModified is the 304 of a page the client holds.
type threadsNotModified struct{ etag string }

// VisitListChannelThreadsResponse implements apigen.ListChannelThreadsResponseObject.
func (n threadsNotModified) VisitListChannelThreadsResponse(w http.ResponseWriter) error {
	w.Header().Set("ETag", n.etag)
	w.Header().Set("Cache-Control", pollCacheControl)
	w.WriteHeader(http.StatusNotModified)
	return nil
}

// threadCursor writes a position as the opaque next_cursor: base64url (no padding) of the
// activity time in Unix microseconds and the thread id, "<micros>.<uuid>".
func threadCursor(p chat.ThreadPosition) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.LastMessageAt.UnixMicro(), 10) + "." + p.ID.String()))
}

// parseThreadCursor reads a cursor threadCursor wrote; false for anything else.
func parseThreadCursor(s string) (chat.ThreadPosition, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return chat.ThreadPosition{}, false
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return chat.ThreadPosition{}, false
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return chat.ThreadPosition{}, false
	}
	tid, err := uuid.Parse(id)
	if err != nil || tid == uuid.Nil || len(id) != len(uuid.Nil.String()) {
		return chat.ThreadPosition{}, false
	}
	return chat.ThreadPosition{LastMessageAt: time.UnixMicro(us).UTC(), ID: tid}, true
}

// toAPIThreadPage converts a page; none is [], never null, and next_cursor is present only
// when the use case gave a next position.
func toAPIThreadPage(p chat.ThreadPage) apigen.ThreadSummaryList {
	items := make([]apigen.ThreadSummary, len(p.Items))
	for i, it := range p.Items {
		th := it.Thread
		items[i] = apigen.ThreadSummary{
			Id:                   th.ID,
			ChannelId:            th.ChannelID,
			SpaceId:              optID(th.SpaceID),
			Title:                th.Title,
			CreatedBy:            th.CreatedBy,
			CreatedAt:            th.CreatedAt,
			Version:              th.Version,
			LastMessageSeq:       th.LastMessageSeq,
			LastMessageAt:        it.LastMessageAt,
			ReplyCount:           it.ReplyCount(),
			FirstMessageExcerpt:  it.FirstMessageExcerpt,
			FirstMessageRedacted: it.FirstMessageRedacted,
			UnreadCount:          it.UnreadCount,
			MentionCount:         it.MentionCount,
		}
	}
	out := apigen.ThreadSummaryList{Items: items}
	if !p.Next.IsZero() {
		c := threadCursor(p.Next)
		out.NextCursor = &c
	}
	return out
}
