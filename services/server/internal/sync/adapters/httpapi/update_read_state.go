package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// UpdateReadState records how far the actor has read the thread of the path; the use case
// authorizes readstate.write on the thread once loaded and lowers last_read_seq to the
// thread's newest seq: 200 with the read state as stored, 400 naming last_read_seq when it
// is negative, 404 for a thread the actor may not see, 403 for one it may only read.
func (s *Server) UpdateReadState(ctx context.Context, req apigen.UpdateReadStateRequestObject) (apigen.UpdateReadStateResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
	}
	r, err := s.personal.UpdateReadState(ctx, req.ThreadId, req.Body.LastReadSeq)
	if err != nil {
		return nil, err
	}
	return apigen.UpdateReadState200JSONResponse(toAPIReadState(r)), nil
}
