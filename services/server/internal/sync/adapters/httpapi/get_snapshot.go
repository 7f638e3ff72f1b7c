package httpapi

import (
	"context"
	"net/http"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/conditional"
)

// GetSnapshot answers the actor's snapshot. Snapshot.Build authorizes sync.snapshot.read on
// the instance itself (so the gateway's ready frame cannot skip it), coalesces concurrent
// builds of the same actor and encodes the view once, with its ETag; the handler sends those
// bytes, or answers 304 when If-None-Match names the ETag. Every answer is Cache-Control:
// private, no-store.
func (s *Server) GetSnapshot(ctx context.Context, req apigen.GetSnapshotRequestObject) (apigen.GetSnapshotResponseObject, error) {
	v, err := s.snapshot.Build(ctx)
	if err != nil {
		return nil, err
	}
	if conditional.NotModified(req.Params.IfNoneMatch, v.ETag) {
		return notModified{etag: v.ETag}, nil
	}
	body := v.Body
	if body == nil {
		// A view that was not built by app.Snapshot carries no body yet.
		if body, err = EncodeSnapshot(v); err != nil {
			return nil, err
		}
	}
	return snapshotBody{body: body, etag: v.ETag}, nil
}

// snapshotBody is the 200 of getSnapshot: the snapshot's encoded body as it is, with the
// headers and the final newline of the generated apigen.GetSnapshot200JSONResponse, which
// would encode the view a second time.
type snapshotBody struct {
	body []byte
	etag string
}

// VisitGetSnapshotResponse implements apigen.GetSnapshotResponseObject.
func (b snapshotBody) VisitGetSnapshotResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("ETag", b.etag)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b.body); err != nil {
		return err
	}
	_, err := w.Write(newline)
	return err
}

// newline ends a JSON body, as json.Encoder does.
var newline = []byte{'\n'}

// notModified is the 304 of a current snapshot, with its ETag and Cache-Control.
type notModified struct{ etag string }

// VisitGetSnapshotResponse implements apigen.GetSnapshotResponseObject.
func (n notModified) VisitGetSnapshotResponse(w http.ResponseWriter) error {
	w.Header().Set("ETag", n.etag)
	w.Header().Set("Cache-Control", cacheControl)
	w.WriteHeader(http.StatusNotModified)
	return nil
}
