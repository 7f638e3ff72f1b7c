package httpapi

import (
	"context"
	"net/http"

	"bothy.example.com/server/internal/apigen"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// GetSnapshot answers the actor's snapshot. Snapshot.Build authorizes sync.snapshot.read on
// the instance itself (so the gateway's ready frame cannot skip it) and coalesces concurrent
// builds of the same actor; the handler only maps the view and answers 304 when If-None-Match
// names the snapshot's ETag. Every answer is Cache-Control: private, no-store.
func (s *Server) GetSnapshot(ctx context.Context, req apigen.GetSnapshotRequestObject) (apigen.GetSnapshotResponseObject, error) {
	v, err := s.snapshot.Build(ctx)
	if err != nil {
		return nil, err
	}
	etag := v.ETag
	if req.Params.IfNoneMatch != nil && syncapp.ETagMatches(*req.Params.IfNoneMatch, etag) {
		return notModified{etag: etag}, nil
	}
	cc := cacheControl
	return apigen.GetSnapshot200JSONResponse{
		Body:    ToAPISnapshot(v),
		Headers: apigen.GetSnapshot200ResponseHeaders{CacheControl: &cc, ETag: &etag},
	}, nil
}

// notModified is the 304 of a current snapshot, with its ETag and Cache-Control.
type notModified struct{ etag string }

// VisitGetSnapshotResponse implements apigen.GetSnapshotResponseObject.
func (n notModified) VisitGetSnapshotResponse(w http.ResponseWriter) error {
	w.Header().Set("ETag", n.etag)
	w.Header().Set("Cache-Control", cacheControl)
	w.WriteHeader(http.StatusNotModified)
	return nil
}
