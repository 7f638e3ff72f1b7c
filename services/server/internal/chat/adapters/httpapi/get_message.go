package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// GetMessage answers the message of the path as listMessages lists it; the use case
// authorizes thread.read on it once loaded: 200 with its ETag, 304 when If-None-Match names
// it, 404 for a message the actor may not read.
func (s *Server) GetMessage(ctx context.Context, req apigen.GetMessageRequestObject) (apigen.GetMessageResponseObject, error) {
	m, err := s.messages.Read(ctx, req.MessageId)
	if err != nil {
		return nil, err
	}
	body := toAPIMessage(m)
	val, current, err := validate(body, req.Params.IfNoneMatch)
	if err != nil {
		return nil, err
	}
	if current {
		return val.notModified(), nil
	}
	return apigen.GetMessage200JSONResponse{Body: body, Headers: apigen.GetMessage200ResponseHeaders{ETag: &val.etag, CacheControl: &val.cacheControl}}, nil
}
