package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// The strict server's error hooks have no operation to trigger them yet
// (today's operations take no body and no parameters), so they are tested
// directly; the integration tests of later operations cover them end to end.
func TestErrorHooks(t *testing.T) {
	t.Parallel()
	tooLarge := &http.MaxBytesError{Limit: 1024}
	tests := []struct {
		name      string
		hook      func(http.ResponseWriter, *http.Request, error)
		err       error
		status    int
		code      string
		wantField problem.FieldError
	}{
		{
			name: "undecodable body", hook: requestError,
			err:    errors.New("can't decode JSON body: invalid character 'x'"),
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "body", Message: "is not a valid JSON document for this operation"},
		},
		{
			name: "body cut by the limit", hook: requestError,
			err:    fmt.Errorf("can't decode JSON body: %w", tooLarge),
			status: 413, code: "payload_too_large",
		},
		{
			name: "invalid parameter", hook: parameterError,
			err:    &apigen.InvalidParamFormatError{ParamName: "after", Err: errors.New("strconv: bad")},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "after", Message: "has an invalid format"},
		},
		{
			name: "missing parameter", hook: parameterError,
			err:    &apigen.RequiredParamError{ParamName: "after"},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "after", Message: "is required"},
		},
		{
			name: "missing header", hook: parameterError,
			err:    &apigen.RequiredHeaderError{ParamName: "If-Match"},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "If-Match", Message: "is required"},
		},
		{
			name: "parameter given twice", hook: parameterError,
			err:    &apigen.TooManyValuesForParamError{ParamName: "limit", Count: 2},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "limit", Message: "must be given once"},
		},
		{
			name: "json parameter", hook: parameterError,
			err:    &apigen.UnmarshalingParamError{ParamName: "filter", Err: errors.New("bad")},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "filter", Message: "is not valid JSON"},
		},
		{
			name: "cookie", hook: parameterError,
			err:    &apigen.UnescapedCookieParamError{ParamName: "session", Err: errors.New("bad")},
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "session", Message: "has an invalid encoding"},
		},
		{
			name: "unknown binding error", hook: parameterError,
			err:    errors.New("something else"),
			status: 400, code: "validation_failed",
			wantField: problem.FieldError{Field: "request", Message: "has an invalid parameter"},
		},
		{
			name: "handler error of a known kind", hook: responseError,
			err:    fmt.Errorf("load space: %w", problem.ErrNotFound),
			status: 404, code: "not_found",
		},
		{
			name: "unexpected handler error", hook: responseError,
			err:    errors.New("pq: relation chat.spaces does not exist"),
			status: 500, code: "internal",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			tc.hook(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/spaces", nil), tc.err)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			var p problem.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("decode problem: %v", err)
			}
			if p.Code != tc.code {
				t.Fatalf("code = %q, want %q", p.Code, tc.code)
			}
			if tc.wantField != (problem.FieldError{}) {
				if len(p.Errors) != 1 || p.Errors[0] != tc.wantField {
					t.Fatalf("errors = %+v, want [%+v]", p.Errors, tc.wantField)
				}
			}
			if tc.status == 500 && p.Detail != problem.InternalDetail {
				t.Fatalf("500 detail = %q, want the fixed internal detail", p.Detail)
			}
		})
	}
}

func TestCheckRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		roles   []string
		wantErr bool
	}{
		{name: "none means all", roles: nil},
		{name: "api", roles: []string{RoleAPI}},
		{name: "maintenance", roles: []string{RoleMaintenance}},
		{name: "both", roles: []string{RoleAPI, RoleMaintenance}},
		{name: "unknown", roles: []string{RoleAPI, "gatway"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := checkRoles(tc.roles); (err != nil) != tc.wantErr {
				t.Fatalf("checkRoles(%v) = %v, want error %v", tc.roles, err, tc.wantErr)
			}
		})
	}
}
