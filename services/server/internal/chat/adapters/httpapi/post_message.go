package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
)

// PostMessage posts a message into the thread of the path; the use case authorizes
// message.create on the thread once loaded: 201 with the message and its seq, 400 naming
// content_md, 404 for a thread the actor may not see, 403 for one it may only read, 409 when
// the channel is archived.
func (s *Server) PostMessage(ctx context.Context, req apigen.PostMessageRequestObject) (apigen.PostMessageResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	in := chat.MessageInput{ThreadID: req.ThreadId, ContentMD: req.Body.ContentMd}
	if req.Body.InvocationToken != nil {
		in.InvocationToken = *req.Body.InvocationToken
	}
	m, err := s.messages.Post(ctx, in)
	if err != nil {
		return nil, err
	}
	return apigen.PostMessage201JSONResponse(toAPIMessage(m)), nil
}
