package httpapi

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
)

// ListChannelMembers returns one page of who can read the channel of the path; the use case
// authorizes channel.read on it once loaded (404 for a channel the actor may not read) and
// caps limit at chat.members_page_size (absent or below 1: that page size; spec 05: capped,
// never an error). next_cursor is the last principal id of a full page.
func (s *Server) ListChannelMembers(ctx context.Context, req apigen.ListChannelMembersRequestObject) (apigen.ListChannelMembersResponseObject, error) {
	var after uuid.UUID
	if req.Params.Cursor != nil {
		after = *req.Params.Cursor
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	page, err := s.channels.Members(ctx, req.ChannelId, after, limit)
	if err != nil {
		return nil, err
	}
	return apigen.ListChannelMembers200JSONResponse(toAPIMemberPage(page)), nil
}
