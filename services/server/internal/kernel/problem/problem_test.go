package problem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestFromKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind   error
		status int
		code   string
		title  string
	}{
		{problem.ErrUnauthenticated, 401, "unauthenticated", "Unauthenticated"},
		{problem.ErrDevicePending, 403, "device_pending", "Device pending"},
		{problem.ErrForbidden, 403, "forbidden", "Forbidden"},
		{problem.ErrNotFound, 404, "not_found", "Not found"},
		{problem.ErrMethodNotAllowed, 405, "method_not_allowed", "Method not allowed"},
		{problem.ErrValidation, 400, "validation_failed", "Validation failed"},
		{problem.ErrConflict, 409, "conflict", "Conflict"},
		{problem.ErrResyncRequired, 410, "resync_required", "Resync required"},
		{problem.ErrPayloadTooLarge, 413, "payload_too_large", "Payload too large"},
		{problem.ErrUnsupportedMediaType, 415, "unsupported_media_type", "Unsupported media type"},
		{problem.ErrRateLimited, 429, "too_many_requests", "Too many requests"},
		{problem.ErrUnavailable, 503, "unavailable", "Unavailable"},
		{errors.New("disk on fire"), 500, "internal", "Internal error"},
	}
	if got, want := len(problem.Entries()), len(tests)-1; got != want {
		t.Fatalf("table has %d kinds, test covers %d", got, want)
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			for _, err := range []error{tt.kind, fmt.Errorf("load thread: %w", tt.kind)} {
				p := problem.From(context.Background(), err)
				if p.Status != tt.status || p.Code != tt.code || p.Title != tt.title || p.Type != "urn:bothy:problem:"+tt.code {
					t.Fatalf("From(%v) = %+v, want %d %s %q", err, p, tt.status, tt.code, tt.title)
				}
				if p.Detail == "" {
					t.Fatalf("From(%v) has no detail", err)
				}
				if strings.Contains(p.Detail, "load thread") {
					t.Fatalf("detail %q leaks the wrapping text", p.Detail)
				}
			}
		})
	}
}

func TestFromDetailAndWrapping(t *testing.T) {
	t.Parallel()
	ctx := correlation.With(context.Background(), "req-alex-1")
	err := fmt.Errorf("get thread 42: %w", problem.New(problem.ErrNotFound, "The thread does not exist."))
	if !errors.Is(err, problem.ErrNotFound) {
		t.Fatal("wrapped New error does not match its kind")
	}
	p := problem.From(ctx, err)
	if p.Status != http.StatusNotFound || p.Detail != "The thread does not exist." || p.RequestID != "req-alex-1" {
		t.Fatalf("From = %+v", p)
	}
	if got := err.Error(); got != "get thread 42: not found: The thread does not exist." {
		t.Fatalf("Error() = %q", got)
	}
	if p.Errors != nil || p.Extensions != nil {
		t.Fatalf("unexpected errors or extensions: %+v", p)
	}
}

func TestFromInternalNeverLeaks(t *testing.T) {
	t.Parallel()
	secret := "password=hunter2 at /var/lib/bothy"
	for _, err := range []error{
		errors.New(secret),
		problem.New(errors.New(secret), secret),
		problem.WithExtensions(errors.New(secret), map[string]any{"secret": secret}),
		nil,
	} {
		p := problem.From(context.Background(), err)
		if p.Status != 500 || p.Code != problem.CodeInternal || p.Detail != problem.InternalDetail {
			t.Fatalf("From(%v) = %+v", err, p)
		}
		body, mErr := json.Marshal(p)
		if mErr != nil {
			t.Fatal(mErr)
		}
		if bytes.Contains(body, []byte("hunter2")) {
			t.Fatalf("500 body leaks the error: %s", body)
		}
	}
}

func TestFromMaxBytesError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("decode body: %w", &http.MaxBytesError{Limit: 1024})
	p := problem.From(context.Background(), err)
	if p.Status != 413 || p.Code != "payload_too_large" || !strings.Contains(p.Detail, "1024") {
		t.Fatalf("From = %+v", p)
	}
}

func TestFromCanceledIsInternal(t *testing.T) {
	t.Parallel()
	p := problem.From(context.Background(), fmt.Errorf("query: %w", context.Canceled))
	if p.Status != 500 || p.Code != problem.CodeInternal {
		t.Fatalf("From = %+v", p)
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	fields := []problem.FieldError{
		{Field: "handle", Message: "must be 3 to 32 lowercase letters"},
		{Field: "email", Message: "must be an address like sam@example.com"},
	}
	err := fmt.Errorf("create person: %w", problem.Validation(fields...))
	fields[0].Field = "changed"
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatal("Validation error does not match ErrValidation")
	}
	if got := err.Error(); !strings.Contains(got, "handle: must be") || !strings.Contains(got, "; email:") {
		t.Fatalf("Error() = %q", got)
	}
	p := problem.From(context.Background(), err)
	if p.Status != 400 || len(p.Errors) != 2 || p.Errors[0].Field != "handle" || p.Errors[1].Field != "email" {
		t.Fatalf("From = %+v", p)
	}
	m := decode(t, p)
	list, ok := m["errors"].([]any)
	if !ok || len(list) != 2 {
		t.Fatalf("errors member = %v", m["errors"])
	}
	first, _ := list[0].(map[string]any)
	if first["field"] != "handle" || first["message"] == "" {
		t.Fatalf("first field error = %v", first)
	}

	bare := decode(t, problem.From(context.Background(), problem.ErrValidation))
	if l, ok := bare["errors"].([]any); !ok || len(l) != 0 {
		t.Fatalf("bare validation errors member = %v, want []", bare["errors"])
	}
	other := decode(t, problem.From(context.Background(), problem.ErrConflict))
	if _, ok := other["errors"]; ok {
		t.Fatalf("errors member on a conflict: %v", other)
	}
	detailed := problem.New(problem.ErrValidation, "The body is not JSON.")
	if got := problem.From(context.Background(), detailed).Detail; got != "The body is not JSON." {
		t.Fatalf("detail = %q", got)
	}
}

func TestWithExtensions(t *testing.T) {
	t.Parallel()
	if problem.WithExtensions(nil, map[string]any{"a": 1}) != nil {
		t.Fatal("WithExtensions(nil) != nil")
	}
	inner := problem.WithExtensions(problem.New(problem.ErrResyncRequired, "The sync epoch changed."),
		map[string]any{"reason": "epoch_changed", "head_seq": 17})
	err := fmt.Errorf("list events: %w", problem.WithExtensions(inner, map[string]any{
		"reason":   "outer_wins",
		"status":   999,
		"nothing":  nil,
		"none":     (*int)(nil),
		"list":     []string(nil),
		"dict":     map[string]int(nil),
		"nested":   map[string]any{"keep": 1, "drop": nil, "arr": []any{1, nil, 2}},
		"recovery": "snapshot",
	}))
	if !errors.Is(err, problem.ErrResyncRequired) {
		t.Fatal("kind lost through WithExtensions")
	}
	if err.Error() != "list events: resync required: The sync epoch changed." {
		t.Fatalf("Error() = %q", err.Error())
	}
	p := problem.From(context.Background(), err)
	if p.Status != 410 || p.Detail != "The sync epoch changed." {
		t.Fatalf("From = %+v", p)
	}
	m := decode(t, p)
	want := map[string]any{"reason": "outer_wins", "head_seq": float64(17), "recovery": "snapshot", "status": float64(410)}
	for k, v := range want {
		if m[k] != v {
			t.Fatalf("member %s = %v, want %v (body %v)", k, m[k], v, m)
		}
	}
	for _, k := range []string{"nothing", "none"} {
		if _, ok := m[k]; ok {
			t.Fatalf("nil extension %s present", k)
		}
	}
	if l, ok := m["list"].([]any); !ok || len(l) != 0 {
		t.Fatalf("nil list = %v, want []", m["list"])
	}
	if d, ok := m["dict"].(map[string]any); !ok || len(d) != 0 {
		t.Fatalf("nil map = %v, want {}", m["dict"])
	}
	nested, _ := m["nested"].(map[string]any)
	if _, ok := nested["drop"]; ok || nested["keep"] != float64(1) {
		t.Fatalf("nested = %v", nested)
	}
	if arr, _ := nested["arr"].([]any); len(arr) != 2 {
		t.Fatalf("nested arr = %v", nested["arr"])
	}
}

func TestMarshalRejectsBadExtension(t *testing.T) {
	t.Parallel()
	p := problem.From(context.Background(), problem.WithExtensions(problem.ErrConflict, map[string]any{"ch": make(chan int)}))
	if _, err := json.Marshal(p); err == nil {
		t.Fatal("Marshal of a channel extension succeeded")
	}
}

func TestUnmarshalRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := correlation.With(context.Background(), "req-robin-3")
	in := problem.From(ctx, problem.WithExtensions(problem.Validation(problem.FieldError{Field: "name", Message: "required"}), map[string]any{"hint": "see docs"}))
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out problem.Problem
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Code != in.Code || out.Status != in.Status || out.RequestID != "req-robin-3" || len(out.Errors) != 1 || out.Extensions["hint"] != "see docs" {
		t.Fatalf("round trip = %+v, want %+v", out, in)
	}
	if err := json.Unmarshal([]byte(`[1]`), &out); err == nil {
		t.Fatal("Unmarshal of an array succeeded")
	}
	if err := json.Unmarshal([]byte(`{"status":"x"}`), &out); err == nil {
		t.Fatal("Unmarshal of a string status succeeded")
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		status    int
		wantLog   bool
		wantLevel string
	}{
		{"not found is not logged", problem.ErrNotFound, 404, false, ""},
		{"internal logs the real error", errors.New("pg: connection reset by peer"), 500, true, "ERROR"},
		{"unavailable logs a warning", problem.ErrUnavailable, 503, true, "WARN"},
		{"canceled logs at info", fmt.Errorf("query: %w", context.Canceled), 500, true, "INFO"},
		{"nil error", nil, 500, true, "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			ctx := logging.With(correlation.With(context.Background(), "req-sam-2"), logging.New(&logs, slog.LevelDebug))
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/threads/1?token=secret", nil)
			w := httptest.NewRecorder()
			problem.Write(w, r, tt.err)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d", w.Code, tt.status)
			}
			if ct := w.Header().Get("Content-Type"); ct != problem.ContentType {
				t.Fatalf("Content-Type = %q", ct)
			}
			m := map[string]any{}
			if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			assertNoNull(t, "", m)
			if m["request_id"] != "req-sam-2" || m["status"] != float64(tt.status) {
				t.Fatalf("body = %v", m)
			}
			if bytes.Contains(w.Body.Bytes(), []byte("connection reset")) {
				t.Fatalf("body leaks the error: %s", w.Body.String())
			}
			if !tt.wantLog {
				if logs.Len() != 0 {
					t.Fatalf("unexpected log: %s", logs.String())
				}
				return
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if line["level"] != tt.wantLevel || line["request_id"] != "req-sam-2" || line["path"] != "/api/v1/threads/1" {
				t.Fatalf("log line = %v", line)
			}
			if tt.err != nil && line["error"] != tt.err.Error() {
				t.Fatalf("log error = %v, want %q", line["error"], tt.err.Error())
			}
		})
	}
}

func TestWriteProblemDropsBadExtensions(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx := logging.With(context.Background(), logging.New(&logs, slog.LevelDebug))
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/spaces", nil)
	w := httptest.NewRecorder()
	problem.Write(w, r, problem.WithExtensions(problem.ErrConflict, map[string]any{"ch": make(chan int), "ok": 1}))
	if w.Code != http.StatusConflict {
		t.Fatalf("status = %d", w.Code)
	}
	m := map[string]any{}
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	if _, ok := m["ch"]; ok || m["code"] != "conflict" {
		t.Fatalf("body = %v", m)
	}
	if !strings.Contains(logs.String(), "encode problem extensions") {
		t.Fatalf("encoding failure not logged: %q", logs.String())
	}
}

func TestEveryKindJSONHasNoNull(t *testing.T) {
	t.Parallel()
	for _, e := range problem.Entries() {
		assertNoNull(t, e.Code, decode(t, problem.From(context.Background(), e.Kind)))
	}
}

// decode marshals p and decodes it as a generic object.
func decode(t *testing.T, p problem.Problem) map[string]any {
	t.Helper()
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("unmarshal %s: %v", body, err)
	}
	assertNoNull(t, "", m)
	for _, k := range []string{"type", "title", "status", "code", "detail"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("member %s missing from %s", k, body)
		}
	}
	return m
}

// assertNoNull walks a decoded JSON value and fails on any null.
func assertNoNull(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Fatalf("null at %q", path)
	case map[string]any:
		for k, e := range x {
			assertNoNull(t, path+"."+k, e)
		}
	case []any:
		for i, e := range x {
			assertNoNull(t, fmt.Sprintf("%s[%d]", path, i), e)
		}
	}
}
