package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetChannel answers the channel of the path as the actor sees it; the use case authorizes
// channel.read on it once loaded: 200 with its ETag, 304 when If-None-Match names it, 404
// for a channel the actor may not read.
func (s *Server) GetChannel(ctx context.Context, req apigen.GetChannelRequestObject) (apigen.GetChannelResponseObject, error) {
	v, err := s.channels.Read(ctx, req.ChannelId)
	if err != nil {
		return nil, err
	}
	body := toAPIChannelView(v)
	val, current, err := validate(body, req.Params.IfNoneMatch)
	if err != nil {
		return nil, err
	}
	if current {
		return val.notModified(), nil
	}
	return apigen.GetChannel200JSONResponse{Body: body, Headers: apigen.GetChannel200ResponseHeaders{ETag: &val.etag, CacheControl: &val.cacheControl}}, nil
}
