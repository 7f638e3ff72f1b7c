package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetSpace answers the space of the path as the actor sees it; the use case authorizes
// space.read on it once loaded: 200 with its ETag, 304 when If-None-Match names it, 404 for
// a space the actor may not read.
func (s *Server) GetSpace(ctx context.Context, req apigen.GetSpaceRequestObject) (apigen.GetSpaceResponseObject, error) {
	v, err := s.spaces.Read(ctx, req.SpaceId)
	if err != nil {
		return nil, err
	}
	body := toAPISpaceView(v)
	val, current, err := validate(body, req.Params.IfNoneMatch)
	if err != nil {
		return nil, err
	}
	if current {
		return val.notModified(), nil
	}
	return apigen.GetSpace200JSONResponse{Body: body, Headers: apigen.GetSpace200ResponseHeaders{ETag: &val.etag, CacheControl: &val.cacheControl}}, nil
}
