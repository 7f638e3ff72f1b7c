package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
)

// CreateThread starts a thread with its first message in the channel of the path; the use
// case authorizes thread.create on the channel once loaded: 201 with the thread and its
// first message, 400 naming the bad fields, 404 for a channel the actor may not see, 403 for
// one it may only read, 409 for an archived one.
func (s *Server) CreateThread(ctx context.Context, req apigen.CreateThreadRequestObject) (apigen.CreateThreadResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	th, first, err := s.threads.Create(ctx, chat.ThreadInput{ChannelID: req.ChannelId, Title: deref(req.Body.Title), ContentMD: req.Body.ContentMd})
	if err != nil {
		return nil, err
	}
	return apigen.CreateThread201JSONResponse(toAPIThread(th, first)), nil
}
