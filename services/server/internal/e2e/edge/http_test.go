package edge

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/wiretest"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)

	resp := env.Client.Get("/healthz")
	if resp.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", resp.Status, resp.Body)
	}
	var h apigen.Health
	resp.JSON(t, &h)
	if h.Status != apigen.HealthStatusOk {
		t.Fatalf("health = %+v, want ok", h)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)

	env.Client.Get("/healthz")
	resp := env.Client.Get("/metrics")
	if resp.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", resp.Status, resp.Body)
	}
	body := string(resp.Body)
	for _, want := range []string{
		`bothy_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`bothy_http_request_duration_seconds_count{method="GET",route="/healthz"} 1`,
		"# TYPE go_goroutines gauge",
		"# TYPE process_resident_memory_bytes gauge",
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestProblemResponses covers the answers no operation gives: unknown
// paths, wrong methods and oversized bodies get problems, never a 5xx or
// chi's plain-text defaults. The body limit is small here so the chunked
// cases stay cheap; TestDefaultBodyLimit covers the default.
func TestProblemResponses(t *testing.T) {
	t.Parallel()
	const limit = 1024
	env := wiretest.New(t, wiretest.WithSetting(config.HTTPMaxBodyBytes, "1024"))
	big := strings.Repeat("a", limit+1)
	small := strings.Repeat("a", limit)

	tests := []struct {
		name      string
		method    string
		path      string
		body      string
		chunked   bool // send without Content-Length
		status    int
		code      string
		wantAllow string
	}{
		{name: "unknown path", method: "GET", path: "/no/such/path", status: 404, code: "not_found"},
		{name: "unknown api path", method: "GET", path: "/api/v1/no-such-collection", status: 404, code: "not_found"},
		{name: "wrong method", method: "POST", path: "/healthz", status: 405, code: "method_not_allowed", wantAllow: "GET, HEAD"},
		{name: "wrong method on an operation that needs a token", method: "DELETE", path: "/api/v1/me", status: 405, code: "method_not_allowed", wantAllow: "GET, HEAD"},
		{name: "unknown path under an operation that needs a token", method: "GET", path: "/api/v1/me/nothing", status: 404, code: "not_found"},
		{name: "malformed path parameter, no token", method: "POST", path: "/api/v1/principals/not-a-uuid/tokens", status: 400, code: "validation_failed"},
		{name: "operation that needs a token, none given", method: "GET", path: "/api/v1/me", status: 401, code: "unauthenticated"},
		{name: "delete on readiness", method: "DELETE", path: "/readyz", status: 405, code: "method_not_allowed", wantAllow: "GET, HEAD"},
		{name: "unknown method", method: "BREW", path: "/metrics", status: 405, code: "method_not_allowed", wantAllow: "GET, HEAD"},
		{name: "unknown method and path", method: "BREW", path: "/teapot", status: 404, code: "not_found"},
		{name: "oversized with length, unknown path", method: "POST", path: "/no/such/path", body: big, status: 413, code: "payload_too_large"},
		{name: "oversized chunked, unknown path", method: "POST", path: "/no/such/path", body: big, chunked: true, status: 413, code: "payload_too_large"},
		{name: "oversized with length, wrong method", method: "POST", path: "/healthz", body: big, status: 413, code: "payload_too_large"},
		{name: "oversized chunked, wrong method", method: "PUT", path: "/healthz", body: big, chunked: true, status: 413, code: "payload_too_large"},
		{name: "oversized with length, get", method: "GET", path: "/healthz", body: big, status: 413, code: "payload_too_large"},
		{name: "at the limit, unknown path", method: "POST", path: "/no/such/path", body: small, chunked: true, status: 404, code: "not_found"},
		{name: "at the limit, wrong method", method: "POST", path: "/healthz", body: small, status: 405, code: "method_not_allowed", wantAllow: "GET, HEAD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
				if tc.chunked {
					// A reader of unknown length makes the client send chunks.
					body = io.MultiReader(body)
				}
			}
			req := env.Client.NewRequest(tc.method, tc.path, body)
			if tc.chunked {
				req.ContentLength = -1
			}
			resp := env.Client.Do(req)
			p := resp.RequireProblem(t, tc.status, tc.code)
			if p.RequestID == "" || p.RequestID != resp.Header.Get("X-Request-Id") {
				t.Fatalf("problem request_id %q, header %q: want the same id", p.RequestID, resp.Header.Get("X-Request-Id"))
			}
			if got := resp.Header.Get("Allow"); got != tc.wantAllow {
				t.Fatalf("Allow = %q, want %q", got, tc.wantAllow)
			}
		})
	}
}

// TestDefaultBodyLimit sends bodies one byte over the default limit, with
// and without a Content-Length, to a path no operation has and to an
// operation that reads its body (as its owner: without a token the request
// is refused with 401 before its body is read).
func TestDefaultBodyLimit(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	def := config.HTTPMaxBodyBytes.Default
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}

	for _, path := range []string{"/api/v1/no-such-path", "/api/v1/people"} {
		for _, chunked := range []bool{false, true} {
			// Valid JSON up to the limit, so the decoder reads past it.
			const prefix, suffix = `{"display_name":"`, `"}`
			raw := prefix + strings.Repeat("a", 1<<20+1-len(prefix)-len(suffix)) + suffix
			body := io.Reader(strings.NewReader(raw))
			if chunked {
				body = io.MultiReader(body)
			}
			req := env.Client.NewRequest(http.MethodPost, path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+owner.Token.Reveal())
			if chunked {
				req.ContentLength = -1
			}
			resp := env.Client.Do(req)
			p := resp.RequireProblem(t, http.StatusRequestEntityTooLarge, "payload_too_large")
			if !strings.Contains(p.Detail, def) {
				t.Fatalf("%s chunked=%v: detail %q does not name the limit %s", path, chunked, p.Detail, def)
			}
		}
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)

	tests := []struct {
		name     string
		incoming string
		keep     bool
	}{
		{name: "valid id kept", incoming: "alex-laptop:req.42_a", keep: true},
		{name: "longest valid id kept", incoming: strings.Repeat("s", 128), keep: true},
		{name: "absent id generated"},
		{name: "too long id replaced", incoming: strings.Repeat("r", 129)},
		{name: "id with spaces replaced", incoming: "robin says hi"},
	}
	for _, tc := range tests {
		for _, path := range []string{"/healthz", "/no/such/path"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				t.Parallel()
				req := env.Client.NewRequest(http.MethodGet, path, nil)
				if tc.incoming != "" {
					req.Header.Set("X-Request-Id", tc.incoming)
				}
				resp := env.Client.Do(req)
				got := resp.Header.Get("X-Request-Id")
				if tc.keep {
					if got != tc.incoming {
						t.Fatalf("X-Request-Id = %q, want the incoming %q", got, tc.incoming)
					}
				} else {
					id, err := uuid.Parse(got)
					if err != nil || id.Version() != 7 {
						t.Fatalf("X-Request-Id = %q, want a generated UUIDv7", got)
					}
				}
				if resp.Status == http.StatusNotFound {
					if p := resp.Problem(t); p.RequestID != got {
						t.Fatalf("problem request_id = %q, want the header's %q", p.RequestID, got)
					}
				}
			})
		}
	}
}

func TestPanicIsInternalProblem(t *testing.T) {
	t.Parallel()
	const secret = "password=hunter2 at /srv/bothy/secret.go:42"
	env := wiretest.New(t, wiretest.WithMount(func(r chi.Router) {
		r.Get("/test/panic", func(http.ResponseWriter, *http.Request) { panic(secret) })
	}))

	resp := env.Client.Get("/test/panic")
	p := resp.RequireProblem(t, http.StatusInternalServerError, problem.CodeInternal)
	if p.Detail != problem.InternalDetail {
		t.Fatalf("detail = %q, want the fixed internal detail", p.Detail)
	}
	for _, leak := range []string{"hunter2", "secret.go", "goroutine", "panic"} {
		if strings.Contains(string(resp.Body), leak) {
			t.Fatalf("500 body leaks %q: %s", leak, resp.Body)
		}
	}
	// The process survives and counts the failure.
	env.Client.Get("/healthz")
	metrics := string(env.Client.Get("/metrics").Body)
	if want := `bothy_http_requests_total{method="GET",route="/test/panic",status="500"} 1`; !strings.Contains(metrics, want) {
		t.Fatalf("metrics lack %q", want)
	}
}
