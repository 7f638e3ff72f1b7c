package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

// cacheControl keeps per-user sync data out of every shared cache (spec 03).
const cacheControl = "private, no-store"

// ListEvents answers one page of catch-up after events.catch_up on the instance (apps: the
// events:subscribe scope): Check first (a cursor that cannot be served answers 410
// resync_required with its reason and how to recover), then Page up to the head Check read,
// never a head the client names. The envelopes are written as the encoder made them, without
// decoding them again; every answer is Cache-Control: private, no-store.
func (s *Server) ListEvents(ctx context.Context, req apigen.ListEventsRequestObject) (apigen.ListEventsResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionEventsCatchUp, authorize.Instance()); err != nil {
		return nil, err
	}
	if req.Params.After < 0 {
		return nil, problem.Validation(problem.FieldError{Field: "after", Message: "must be 0 or more"})
	}
	in := syncmod.CheckInput{After: req.Params.After}
	if req.Params.Epoch != nil {
		in.Epoch = syncmod.EpochOf(*req.Params.Epoch)
	}
	res, err := s.catchUp.Check(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := res.Err(); err != nil {
		return resyncFor(ctx, err)
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	page, err := s.catchUp.Page(ctx, syncmod.PageInput{
		After: req.Params.After, Head: res.HeadSeq, Limit: limit,
		// The page follows its check at once: the permission version read with the head serves.
		PermissionVersion: res.PermissionVersion, PermissionVersionRead: res.PermissionVersionRead,
	})
	if err != nil {
		if _, ok := syncmod.IsResync(err); ok {
			// Retention overtook the reader while the page was read.
			return resyncFor(ctx, err)
		}
		return nil, err
	}
	return eventPage{res: res, page: page}, nil
}

// resyncFor is the 410 of a cursor that cannot be served, with its members and the
// Cache-Control of every sync answer; an error that is no resync problem is returned as is.
func resyncFor(ctx context.Context, err error) (apigen.ListEventsResponseObject, error) {
	r, ok := problem.Declared(ctx, err, []int{http.StatusGone})
	if !ok {
		return nil, err
	}
	return goneResponse{r}, nil
}

// goneResponse writes the 410 problem with Cache-Control: private, no-store.
type goneResponse struct{ problem.Response }

// VisitListEventsResponse implements apigen.ListEventsResponseObject.
func (g goneResponse) VisitListEventsResponse(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", cacheControl)
	return g.Write(w)
}

// eventPage writes an EventPage whose events are the encoder's bytes, copied verbatim: a page
// of hundreds of envelopes is neither decoded nor encoded again.
type eventPage struct {
	res  syncmod.CheckResult
	page syncmod.PageResult
}

// pageBuffers keeps the buffers pages are assembled in, so that a page of hundreds of
// envelopes does not allocate its whole size again for every request (make bench's full
// catch-up). A buffer is back in the pool once Write returned: a writer never keeps p.
var pageBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPage is the largest buffer kept for reuse; a bigger one (a page of huge payloads)
// is left to the garbage collector.
const maxPooledPage = 4 << 20

// VisitListEventsResponse implements apigen.ListEventsResponseObject.
func (p eventPage) VisitListEventsResponse(w http.ResponseWriter) error {
	size := 192
	for _, e := range p.page.Events {
		size += len(e) + 1
	}
	pb := pageBuffers.Get().(*[]byte) //nolint:forcetypeassert // the pool holds nothing else
	b := (*pb)[:0]
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	b = append(b, `{"events":[`...)
	for i, e := range p.page.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	b = append(b, `],"next_cursor":`...)
	b = strconv.AppendInt(b, p.page.NextCursor, 10)
	b = append(b, `,"head_seq":`...)
	b = strconv.AppendInt(b, p.res.HeadSeq, 10)
	b = append(b, `,"sync_epoch":"`...)
	b = append(b, p.res.SyncEpoch.String()...)
	b = append(b, `","oldest_seq":`...)
	b = strconv.AppendInt(b, p.res.OldestSeq(), 10)
	b = append(b, "}\n"...)
	if p.page.Release != nil {
		// The envelopes are copied: their buffer serves the next page.
		p.page.Release()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cacheControl)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	if cap(b) <= maxPooledPage {
		*pb = b
		pageBuffers.Put(pb)
	}
	return err
}
