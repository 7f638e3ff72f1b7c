package httpmw_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
)

func TestParseOrigins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, list string
		want       []string
		bad        []string // entries the error must name
	}{
		{"empty", "", nil, nil},
		{"blanks and empty entries", " https://App.example.com ,, http://localhost:5173/ ,", []string{"https://app.example.com", "http://localhost:5173"}, nil},
		{"no scheme", "app.example.com", nil, []string{"app.example.com"}},
		{"wildcard", "https://*.example.com,https://app.example.com", []string{"https://app.example.com"}, []string{"https://*.example.com"}},
		{"lone wildcard", "*", nil, []string{"*"}},
		{"path, query, user", "https://app.example.com/chat,https://app.example.com?x=1,https://sam@app.example.com", nil,
			[]string{"https://app.example.com/chat", "https://app.example.com?x=1", "https://sam@app.example.com"}},
		{"opaque origin", "null", nil, []string{"null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := httpmw.ParseOrigins(tc.list)
			if !slices.Equal(got, tc.want) {
				t.Errorf("origins = %q, want %q", got, tc.want)
			}
			if (err != nil) != (len(tc.bad) > 0) {
				t.Fatalf("error = %v, want one naming %q", err, tc.bad)
			}
			for _, b := range tc.bad {
				if !strings.Contains(err.Error(), b) {
					t.Errorf("error %v does not name %q", err, b)
				}
			}
		})
	}
}

// TestCORSUnit drives CORS over a recorder: the preflight of a listed origin is answered
// without reaching the handler, every other request reaches it, and the max age is in whole
// seconds.
func TestCORSUnit(t *testing.T) {
	t.Parallel()
	mw := httpmw.CORS(httpmw.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}, MaxAge: 90*time.Second + 500*time.Millisecond})
	for _, tc := range []struct {
		name, method, origin, requestMethod string
		reached                             bool
		allowOrigin, maxAge                 string
	}{
		{"listed preflight", http.MethodOptions, "https://app.example.com", http.MethodPut, false, "https://app.example.com", "90"},
		{"listed preflight, origin in capitals", http.MethodOptions, "https://APP.example.com", http.MethodPut, false, "https://APP.example.com", "90"},
		{"unlisted preflight", http.MethodOptions, "https://elsewhere.example.com", http.MethodPut, true, "", ""},
		{"plain OPTIONS from a listed origin", http.MethodOptions, "https://app.example.com", "", true, "https://app.example.com", ""},
		{"listed GET", http.MethodGet, "https://app.example.com", "", true, "https://app.example.com", ""},
		{"GET without Origin", http.MethodGet, "", "", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reached := false
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				reached = true
				w.WriteHeader(http.StatusTeapot)
			}))
			r := httptest.NewRequestWithContext(t.Context(), tc.method, "/api/v1/me", nil)
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.requestMethod != "" {
				r.Header.Set("Access-Control-Request-Method", tc.requestMethod)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if reached != tc.reached {
				t.Errorf("handler reached = %v, want %v", reached, tc.reached)
			}
			if !reached && w.Code != http.StatusNoContent {
				t.Errorf("preflight status %d, want 204", w.Code)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != tc.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tc.allowOrigin)
			}
			if got := w.Header().Get("Access-Control-Max-Age"); got != tc.maxAge {
				t.Errorf("Access-Control-Max-Age = %q, want %q", got, tc.maxAge)
			}
			if got := w.Header().Values("Vary"); !slices.Contains(got, "Origin") {
				t.Errorf("Vary = %q, want Origin", got)
			}
		})
	}
}

// TestRecoverKeepsCORS: the problem that replaces a panicking handler's answer keeps the CORS
// headers set before the handler ran, so a browser page can read it, and drops the handler's
// own headers.
func TestRecoverKeepsCORS(t *testing.T) {
	t.Parallel()
	logger := logging.New(&bytes.Buffer{}, slog.LevelInfo)
	boom := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		panic("boom")
	})
	cors := httpmw.CORS(httpmw.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}})
	h := httpmw.Recover(httpmw.RequestID(cors(boom)))
	r := httptest.NewRequestWithContext(logging.With(t.Context(), logger), http.MethodGet, "/api/v1/me", nil)
	r.Header.Set("Origin", "https://app.example.com")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assertProblem(t, w, http.StatusInternalServerError, "internal")
	if w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || w.Header().Get("Vary") != "Origin" {
		t.Errorf("CORS headers lost: %v", w.Header())
	}
	if w.Header().Get("Cache-Control") != "" {
		t.Error("handler header survived the panic")
	}
}
