package httpmw_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestRequestID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		incoming string
		keep     bool
	}{
		{"none", "", false},
		{"valid kept", "req-alex-42:retry.1", true},
		{"uuid kept", "0190a6b2-7c1e-7d3a-9f00-1234567890ab", true},
		{"too long replaced", strings.Repeat("a", 129), false},
		{"bad chars replaced", "robin<script>", false},
		{"space replaced", "sam 1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen string
			h := httpmw.RequestID(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				seen = correlation.From(r.Context())
			}))
			r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/me", nil)
			if tt.incoming != "" {
				r.Header.Set("X-Request-Id", tt.incoming)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got := w.Header().Get("X-Request-Id")
			if got != seen {
				t.Fatalf("header %q != context %q", got, seen)
			}
			if tt.keep {
				if got != tt.incoming {
					t.Fatalf("id = %q, want incoming %q kept", got, tt.incoming)
				}
				return
			}
			u, err := uuid.Parse(got)
			if err != nil || u.Version() != 7 {
				t.Fatalf("id = %q, want a new UUIDv7 (err %v)", got, err)
			}
		})
	}
}

// failingBody fails the test when read, to prove a body was rejected unread.
type failingBody struct{ t *testing.T }

func (b failingBody) Read([]byte) (int, error) {
	b.t.Error("body was read")
	return 0, io.EOF
}
func (failingBody) Close() error { return nil }

// readAll is a handler that reads the body and answers through problem.Write on failure.
func readAll(got *[]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			problem.Write(w, r, err)
			return
		}
		*got = b
		w.WriteHeader(http.StatusCreated)
	})
}

func TestBodyLimitByContentLength(t *testing.T) {
	t.Parallel()
	called := false
	h := httpmw.BodyLimit(10)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/spaces", nil)
	r.Body = failingBody{t}
	r.ContentLength = 11
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if called {
		t.Fatal("handler called for an oversized body")
	}
	assertProblem(t, w, http.StatusRequestEntityTooLarge, "payload_too_large")
}

func TestBodyLimitByReading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"under", "hello", http.StatusCreated},
		{"exactly max", "0123456789", http.StatusCreated},
		{"over", "0123456789ab", http.StatusRequestEntityTooLarge},
		{"empty", "", http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []byte
			h := httpmw.BodyLimit(10)(readAll(&got))
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/spaces", strings.NewReader(tt.body))
			r.ContentLength = -1 // unknown length, as with chunked encoding
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if tt.status != http.StatusCreated {
				assertProblem(t, w, tt.status, "payload_too_large")
				return
			}
			if w.Code != tt.status || string(got) != tt.body {
				t.Fatalf("status %d body %q, want %d %q", w.Code, got, tt.status, tt.body)
			}
		})
	}
}

func TestBodyLimitChunkedOverTheWire(t *testing.T) {
	t.Parallel()
	var got []byte
	chunked := make(chan bool, 2)
	inner := readAll(&got)
	srv := httptest.NewServer(httpmw.RequestID(httpmw.BodyLimit(16)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunked <- r.ContentLength == -1 && slices.Contains(r.TransferEncoding, "chunked")
		inner.ServeHTTP(w, r)
	}))))
	t.Cleanup(srv.Close)
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"small", "hello robin", http.StatusCreated},
		{"large", strings.Repeat("x", 1000), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		// A reader of unknown length makes the client send the body chunked.
		body := io.MultiReader(strings.NewReader(tt.body))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v1/spaces", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if !<-chunked {
			t.Fatalf("%s: request was not chunked", tt.name)
		}
		if resp.StatusCode != tt.status {
			t.Fatalf("%s: status %d, want %d (%s)", tt.name, resp.StatusCode, tt.status, b)
		}
		if tt.status == http.StatusRequestEntityTooLarge {
			if resp.Header.Get("Content-Type") != problem.ContentType || !bytes.Contains(b, []byte(`"code":"payload_too_large"`)) {
				t.Fatalf("%s: body %s", tt.name, b)
			}
		}
	}
}

func TestBodyLimitNegativePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("BodyLimit(-1) did not panic")
		}
	}()
	httpmw.BodyLimit(-1)
}

func TestRecover(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	logger := logging.New(&logs, slog.LevelInfo)
	withLogger := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(logging.With(r.Context(), logger)))
		})
	}
	boom := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		panic("secret sauce for sam@example.com")
	})
	h := withLogger(httpmw.Recover(httpmw.RequestID(boom)))
	r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/me", nil)
	r.Header.Set("X-Request-Id", "req-sam-9")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	m := assertProblem(t, w, http.StatusInternalServerError, "internal")
	if m["request_id"] != "req-sam-9" || w.Header().Get("X-Request-Id") != "req-sam-9" {
		t.Fatalf("request id missing: header %q body %v", w.Header().Get("X-Request-Id"), m)
	}
	if w.Header().Get("Cache-Control") != "" {
		t.Fatal("handler header survived the panic")
	}
	body := w.Body.String()
	if strings.Contains(body, "secret sauce") || strings.Contains(body, "goroutine") || strings.Contains(body, ".go:") {
		t.Fatalf("body leaks the panic: %s", body)
	}
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	stack, _ := line["stack"].(string)
	if line["level"] != "ERROR" || line["panic"] != "secret sauce for sam@example.com" || line["request_id"] != "req-sam-9" || !strings.Contains(stack, "goroutine") {
		t.Fatalf("log line = %v", line)
	}
}

func TestRecoverAfterResponseStarted(t *testing.T) {
	t.Parallel()
	h := httpmw.Recover(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("partial"))
		panic("late")
	}))
	got := catch(func() {
		h.ServeHTTP(httptest.NewRecorder(), quiet(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)))
	})
	if got != http.ErrAbortHandler { //nolint:errorlint // identity is what net/http checks
		t.Fatalf("panic = %v, want http.ErrAbortHandler", got)
	}
}

func TestRecoverPassesAbortHandler(t *testing.T) {
	t.Parallel()
	h := httpmw.Recover(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	w := httptest.NewRecorder()
	got := catch(func() { h.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)) })
	if got != http.ErrAbortHandler { //nolint:errorlint // identity is what net/http checks
		t.Fatalf("panic = %v, want http.ErrAbortHandler", got)
	}
	if w.Body.Len() != 0 {
		t.Fatalf("body written: %s", w.Body.String())
	}
}

func TestRecoverNoPanic(t *testing.T) {
	t.Parallel()
	h := httpmw.Recover(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), http.MethodDelete, "/api/v1/grants/1", nil))
	if w.Code != http.StatusNoContent {
		t.Fatalf("status = %d", w.Code)
	}
}

func TestAccessLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		status  int
		bytes   float64
	}{
		{"explicit status", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":1}`))
		}, http.StatusCreated, 8},
		{"implicit 200", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("ok"))
		}, http.StatusOK, 2},
		{"nothing written", func(http.ResponseWriter, *http.Request) {}, http.StatusOK, 0},
		{"informational first", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusAccepted)
		}, http.StatusAccepted, 0},
		{"flush", func(w http.ResponseWriter, _ *http.Request) {
			if err := http.NewResponseController(w).Flush(); err != nil {
				panic(err)
			}
			w.(http.Flusher).Flush()
		}, http.StatusOK, 0},
		{"panic", func(http.ResponseWriter, *http.Request) { panic("boom") }, http.StatusInternalServerError, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := logging.New(&logs, slog.LevelInfo)
			h := httpmw.Recover(httpmw.RequestID(httpmw.AccessLog(logger)(tt.handler)))
			r := quietNew(t, http.MethodPost, "/api/v1/spaces?token=hunter2&name=Alex", strings.NewReader("{}"))
			r.Header.Set("Authorization", "Bearer bothy_secret_token")
			r.Header.Set("X-Request-Id", "req-robin-5")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status && w.Code != http.StatusEarlyHints {
				t.Fatalf("response status = %d, want %d", w.Code, tt.status)
			}
			out := logs.String()
			if strings.Contains(out, "hunter2") || strings.Contains(out, "bothy_secret_token") || strings.Contains(out, "Bearer") {
				t.Fatalf("access log leaks secrets: %s", out)
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &line); err != nil {
				t.Fatalf("log %q: %v", out, err)
			}
			if line["method"] != "POST" || line["path"] != "/api/v1/spaces" || line["status"] != float64(tt.status) ||
				line["request_id"] != "req-robin-5" || line["bytes"] != tt.bytes {
				t.Fatalf("log line = %v", line)
			}
			if d, ok := line["duration"].(float64); !ok || d < 0 {
				t.Fatalf("duration = %v", line["duration"])
			}
		})
	}
}

func TestRecorderUnwrapReachesHijacker(t *testing.T) {
	t.Parallel()
	hijacked := make(chan error, 1)
	h := httpmw.Recover(httpmw.AccessLog(slog.New(slog.DiscardHandler))(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_, err = conn.Write([]byte("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"))
			_ = conn.Close()
		}
		hijacked <- err
	})))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/gateway", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if err := <-hijacked; err != nil {
		t.Fatalf("hijack through the middleware: %v", err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status = %d", resp.StatusCode)
	}
}

// assertProblem checks a problem response and returns its decoded body.
func assertProblem(t *testing.T, w *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status = %d, want %d (%s)", w.Code, status, w.Body.String())
	}
	if ct := w.Header().Get("Content-Type"); ct != problem.ContentType {
		t.Fatalf("Content-Type = %q", ct)
	}
	m := map[string]any{}
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	if m["code"] != code {
		t.Fatalf("code = %v, want %s", m["code"], code)
	}
	return m
}

// quiet gives r a logger that drops everything, for tests that panic on purpose.
func quiet(r *http.Request) *http.Request {
	return r.WithContext(logging.With(r.Context(), slog.New(slog.DiscardHandler)))
}

// quietNew is httptest.NewRequestWithContext with a discarding logger in the context.
func quietNew(t *testing.T, method, target string, body io.Reader) *http.Request {
	t.Helper()
	return quiet(httptest.NewRequestWithContext(t.Context(), method, target, body))
}

// catch runs f and returns what it panicked with.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}
