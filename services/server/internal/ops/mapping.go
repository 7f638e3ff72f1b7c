package ops

import (
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// toAPIProblem converts a kernel problem into the generated Problem model,
// for typed problem responses. Empty optional members stay absent (nil
// pointers), so the JSON has no null and no empty strings that mean nothing.
// Extensions are not carried: a problem with extensions (resync_required)
// has its own schema and typed response.
func toAPIProblem(p problem.Problem) apigen.Problem {
	out := apigen.Problem{
		Type:   p.Type,
		Title:  p.Title,
		Status: int32(p.Status), //nolint:gosec // HTTP status codes are three digits.
		Code:   p.Code,
	}
	if p.Detail != "" {
		out.Detail = &p.Detail
	}
	if p.RequestID != "" {
		out.RequestId = &p.RequestID
	}
	if len(p.Errors) > 0 {
		errs := make([]apigen.FieldError, len(p.Errors))
		for i, e := range p.Errors {
			errs[i] = apigen.FieldError{Field: e.Field, Message: e.Message}
		}
		out.Errors = &errs
	}
	return out
}
