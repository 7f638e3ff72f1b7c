package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetThread answers the thread of the path with what its header needs; the use case
// authorizes thread.read on it once loaded: 200 with its ETag, 304 when If-None-Match names
// it, 404 for a thread the actor may not read.
func (s *Server) GetThread(ctx context.Context, req apigen.GetThreadRequestObject) (apigen.GetThreadResponseObject, error) {
	v, err := s.threads.Read(ctx, req.ThreadId)
	if err != nil {
		return nil, err
	}
	body := toAPIThreadView(v)
	val, current, err := validate(body, req.Params.IfNoneMatch)
	if err != nil {
		return nil, err
	}
	if current {
		return val.notModified(), nil
	}
	return apigen.GetThread200JSONResponse{Body: body, Headers: apigen.GetThread200ResponseHeaders{ETag: &val.etag, CacheControl: &val.cacheControl}}, nil
}
