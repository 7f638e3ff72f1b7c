package webui_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/webui"
)

// build is a small client build as Vite lays it out.
var build = fstest.MapFS{
	"index.html":                {Data: []byte(`<!doctype html><title>bothy</title><script type="module" src="/assets/index-3f2a.js"></script>`)},
	"assets/index-3f2a.js":      {Data: []byte(`console.log("bothy")`)},
	"assets/index-9c1d.css":     {Data: []byte(`body{margin:0}`)},
	"favicon.svg":               {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
	".vite/manifest.json":       {Data: []byte(`{}`)},
	"assets/.hidden-by-dotfile": {Data: []byte(`x`)},
}

func router(t *testing.T, s *webui.Site) http.Handler {
	t.Helper()
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "api 404", http.StatusNotFound) })
	s.Mount(r)
	return r
}

// answer is one response, read whole.
type answer struct {
	StatusCode int
	Header     http.Header
	Body       string
}

func get(t *testing.T, h http.Handler, method, target string, header http.Header) answer {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{StatusCode: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

func TestServe(t *testing.T) {
	t.Parallel()
	s, err := webui.Load(build)
	if err != nil {
		t.Fatal(err)
	}
	h := router(t, s)
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		cache              string
		bodyHas            string
	}{
		{"the index at the root", "GET", "/", 200, "text/html; charset=utf-8", "no-cache", "<title>bothy</title>"},
		{"the index by name", "GET", "/index.html", 200, "text/html; charset=utf-8", "no-cache", "<title>bothy</title>"},
		{"a hashed script for good", "GET", "/assets/index-3f2a.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "bothy"},
		{"a hashed stylesheet", "GET", "/assets/index-9c1d.css", 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", "margin"},
		{"a top-level file", "GET", "/favicon.svg", 200, "image/svg+xml", "no-cache", "<svg"},
		{"HEAD of the index", "HEAD", "/", 200, "text/html; charset=utf-8", "no-cache", ""},
		{"a path the build lacks stays the API's 404", "GET", "/channels/general", 404, "", "", "api 404"},
		{"a dotfile is not served", "GET", "/.vite/manifest.json", 404, "", "", "api 404"},
		{"a hidden asset is not served", "GET", "/assets/.hidden-by-dotfile", 404, "", "", "api 404"},
		{"an API path is never shadowed", "GET", "/api/v1/me", 404, "", "", "api 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := get(t, h, tc.method, tc.path, nil)
			body := res.Body
			if res.StatusCode != tc.status {
				t.Fatalf("%s %s = %d, want %d (%s)", tc.method, tc.path, res.StatusCode, tc.status, body)
			}
			if !strings.Contains(body, tc.bodyHas) {
				t.Errorf("body %q lacks %q", body, tc.bodyHas)
			}
			if tc.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := res.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control = %q, want %q", got, tc.cache)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("ETag") == "" {
				t.Errorf("headers = %v", res.Header)
			}
			if tc.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD has a body of %d bytes", len(body))
			}
		})
	}
}

func TestServeRevalidates(t *testing.T) {
	t.Parallel()
	s, err := webui.Load(build)
	if err != nil {
		t.Fatal(err)
	}
	h := router(t, s)
	first := get(t, h, "GET", "/", nil)
	etag := first.Header.Get("ETag")
	if again := get(t, h, "GET", "/", http.Header{"If-None-Match": {etag}}); again.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match %s = %d, want 304", etag, again.StatusCode)
	}
	if other := get(t, h, "GET", "/favicon.svg", http.Header{"If-None-Match": {etag}}); other.StatusCode != http.StatusOK {
		t.Fatalf("another file's ETag = %d, want 200", other.StatusCode)
	}
}

func TestLoadWantsAnIndex(t *testing.T) {
	t.Parallel()
	if _, err := webui.Load(fstest.MapFS{"assets/a.js": {Data: []byte("x")}}); err == nil {
		t.Fatal("Load of a build without index.html succeeded")
	}
}

func TestNewFromDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<title>Robin's build</title>"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := webui.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != dir {
		t.Errorf("Source = %q, want %q", s.Source, dir)
	}
	body := get(t, router(t, s), "GET", "/", nil).Body
	if !strings.Contains(body, "Robin's build") {
		t.Errorf("GET / = %q", body)
	}
	if _, err := webui.New(t.TempDir()); err == nil || !strings.Contains(err.Error(), "web.dir") {
		t.Errorf("New(empty directory) = %v, want an error naming web.dir", err)
	}
}

func TestNewWithoutABuild(t *testing.T) {
	t.Parallel()
	s, err := webui.New("")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "none" && s.Source != "embedded" {
		t.Fatalf("Source = %q", s.Source)
	}
	res := get(t, router(t, s), "GET", "/", nil)
	body := res.Body
	if res.StatusCode != 200 || !strings.Contains(body, "<html") {
		t.Fatalf("GET / = %d %q", res.StatusCode, body)
	}
	if s.Source == "none" && !strings.Contains(body, "make web-build") {
		t.Errorf("the page of a binary without a client does not say how to build one: %q", body)
	}
}
