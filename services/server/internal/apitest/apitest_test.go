package apitest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"bothy.example.com/server/internal/apitest"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	okID := http.Header{"X-Request-Id": {"req-sam-1"}}
	problemHeader := func(id string) http.Header {
		h := http.Header{"Content-Type": {"application/problem+json"}}
		if id != "" {
			h.Set("X-Request-Id", id)
		}
		return h
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-sam-1"}}
	notFound := `{"type":"urn:bothy:problem:not_found","title":"Not found","status":404,"code":"not_found","detail":"No route."}`
	tests := []struct {
		name    string
		method  string
		path    string
		status  int
		header  http.Header
		body    string
		wantErr string // "" means valid
	}{
		{
			name: "health ok", method: "GET", path: "/healthz", status: 200,
			header: jsonHeader, body: `{"status":"ok"}`,
		},
		{
			name: "health with a member the document does not name", method: "GET", path: "/healthz", status: 200,
			header: jsonHeader, body: `{"status":"ok","uptime":"3s"}`, wantErr: "uptime",
		},
		{
			name: "a problem may carry extension members", method: "GET", path: "/nowhere", status: 404,
			header: problemHeader("req-sam-1"), body: `{"type":"urn:bothy:problem:not_found","title":"Not found","status":404,"code":"not_found","hint":"try /api/v1"}`,
		},
		{
			name: "health wrong enum", method: "GET", path: "/healthz", status: 200,
			header: jsonHeader, body: `{"status":"fine"}`, wantErr: "openapi",
		},
		{
			name: "status not in the document", method: "GET", path: "/healthz", status: 418,
			header: jsonHeader, body: `{"status":"ok"}`, wantErr: "openapi",
		},
		{
			name: "null anywhere", method: "GET", path: "/readyz", status: 200,
			header: jsonHeader, body: `{"status":"ready","checks":[{"name":"database","status":"ok","note":null}]}`,
			wantErr: "null at $.checks[0].note",
		},
		{
			name: "no request id", method: "GET", path: "/healthz", status: 200,
			header: http.Header{"Content-Type": {"application/json"}}, body: `{"status":"ok"}`,
			wantErr: "X-Request-Id",
		},
		{
			name: "metrics text", method: "GET", path: "/metrics", status: 200,
			header: http.Header{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}, "X-Request-Id": {"req-robin-1"}},
			body:   "# TYPE x counter\nx 1\n",
		},
		{
			name: "unrouted path with a problem", method: "GET", path: "/no/such/path", status: 404,
			header: problemHeader("req-sam-1"), body: notFound,
		},
		{
			name: "unrouted method with a problem", method: "POST", path: "/healthz", status: 405,
			header: problemHeader("req-sam-1"),
			body:   `{"type":"urn:bothy:problem:method_not_allowed","title":"Method not allowed","status":405,"code":"method_not_allowed","detail":"No."}`,
		},
		{
			name: "unrouted path without a problem", method: "GET", path: "/nope", status: 404,
			header: http.Header{"Content-Type": {"text/plain"}, "X-Request-Id": {"req-sam-1"}}, body: "404 page not found",
			wantErr: "application/problem+json",
		},
		{
			name: "problem status disagrees with the response", method: "GET", path: "/nope", status: 400,
			header: problemHeader("req-sam-1"), body: notFound, wantErr: "status",
		},
		{
			name: "problem type disagrees with its code", method: "GET", path: "/nope", status: 404,
			header:  problemHeader("req-sam-1"),
			body:    `{"type":"urn:bothy:problem:conflict","title":"Not found","status":404,"code":"not_found"}`,
			wantErr: "type",
		},
		{
			name: "problem missing a required member", method: "GET", path: "/nope", status: 404,
			header: problemHeader("req-sam-1"), body: `{"type":"urn:bothy:problem:not_found","status":404,"code":"not_found"}`,
			wantErr: "title",
		},
		{
			name: "invalid json", method: "GET", path: "/healthz", status: 200,
			header: jsonHeader, body: `{"status":`, wantErr: "json",
		},
		{
			name: "invalid request id", method: "GET", path: "/healthz", status: 200,
			header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"bad id with spaces"}},
			body:   `{"status":"ok"}`, wantErr: "X-Request-Id",
		},
		{
			name: "empty body without content", method: "GET", path: "/healthz", status: 200,
			header: okID, body: "", wantErr: "openapi",
		},
		{
			name: "HEAD as its GET, without a body", method: "HEAD", path: "/healthz", status: 200,
			header: jsonHeader, body: "",
		},
		{
			name: "HEAD with a body", method: "HEAD", path: "/healthz", status: 200,
			header: jsonHeader, body: `{"status":"ok"}`, wantErr: "body",
		},
		{
			name: "HEAD with a status its GET does not declare", method: "HEAD", path: "/healthz", status: 418,
			header: jsonHeader, body: "", wantErr: "openapi",
		},
		{
			name: "HEAD of a path without GET", method: "HEAD", path: "/api/v1/people", status: 405,
			header: problemHeader("req-sam-1"), body: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequestWithContext(t.Context(), tc.method, "http://127.0.0.1:8080"+tc.path, nil)
			err := apitest.Validate(context.Background(), req, tc.status, tc.header, []byte(tc.body))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want an error mentioning %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	t.Parallel()
	root, err := apitest.RepoRoot()
	if err != nil {
		t.Fatalf("RepoRoot: %v", err)
	}
	if !strings.HasSuffix(apitest.SpecPath(root), "/api/openapi.yaml") {
		t.Fatalf("SpecPath(%q) = %q", root, apitest.SpecPath(root))
	}
}

func TestValidateOperation(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		path    string
		status  int
		body    string
		wantErr string // "" means valid
	}{
		{name: "a handler's answer needs no request id", path: "/healthz", status: 200, body: `{"status":"ok"}`},
		{name: "the document still decides", path: "/healthz", status: 200, body: `{"status":"fine"}`, wantErr: "openapi"},
		{name: "no null", path: "/healthz", status: 200, body: `{"status":null}`, wantErr: "null at $.status"},
		{name: "no operation", path: "/nowhere", status: 200, body: `{}`, wantErr: "has no operation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, tc.path, nil)
			err := apitest.ValidateOperation(t.Context(), req, tc.status, jsonHeader, []byte(tc.body))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateOperation: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ValidateOperation error %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}
