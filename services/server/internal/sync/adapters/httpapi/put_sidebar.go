package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// PutSidebar replaces the actor's sidebar after setting.write on the actor, decided here
// before the body is looked at: 200 with the sidebar as stored, 400 naming sections when the
// body has none or the use case refuses them (too many, bad keys or titles). Channel ids are
// passed as sent; the snapshot leaves out what the actor cannot read.
func (s *Server) PutSidebar(ctx context.Context, req apigen.PutSidebarRequestObject) (apigen.PutSidebarResponseObject, error) {
	if err := s.authorizeSelf(ctx); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	// An absent member and a JSON null both leave the slice nil; [] is an empty sidebar.
	if req.Body.Sections == nil {
		return nil, errNoSections
	}
	sb, err := s.personal.PutSidebar(ctx, toSections(req.Body.Sections))
	if err != nil {
		return nil, err
	}
	return apigen.PutSidebar200JSONResponse(toAPISidebar(sb)), nil
}
