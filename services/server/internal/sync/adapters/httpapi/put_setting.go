package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// PutSetting stores the actor's setting of the path's key after setting.write on the actor,
// decided here before the body is looked at: 200 with the setting as stored (normalized),
// 400 naming value when the body has none or the use case refuses it (null, too large), 400
// naming key for a key outside the pattern.
func (s *Server) PutSetting(ctx context.Context, req apigen.PutSettingRequestObject) (apigen.PutSettingResponseObject, error) {
	if err := s.authorizeSelf(ctx); err != nil {
		return nil, err
	}
	if req.Body == nil {
		return nil, errNoBody
	}
	// An absent member leaves the raw value empty; a JSON null arrives as the four bytes
	// "null" and is the use case's to refuse.
	if len(req.Body.Value) == 0 {
		return nil, errNoValue
	}
	st, err := s.personal.PutSetting(ctx, req.Key, req.Body.Value)
	if err != nil {
		return nil, err
	}
	return apigen.PutSetting200JSONResponse(toAPISetting(st)), nil
}
