package edge

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bothy.example.com/server/internal/webui"
	"bothy.example.com/server/internal/wiretest"
)

// TestWebClientServed: bothy serve answers / with the web client's build from web.dir (its
// files by their paths, with the security headers), while every path of the API keeps its
// problems, so the client can never shadow an operation.
func TestWebClientServed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":         `<!doctype html><title>bothy for Alex</title>`,
		"assets/app-1a2b.js": `console.log("bothy")`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := wiretest.New(t, wiretest.WithSetting(webui.KeyDir, dir))

	index := env.Client.Get("/")
	if index.Status != http.StatusOK || !strings.Contains(string(index.Body), "bothy for Alex") {
		t.Fatalf("GET / = %d %q", index.Status, index.Body)
	}
	if csp := index.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("GET / Content-Security-Policy = %q", csp)
	}
	if index.Header.Get("X-Request-Id") == "" {
		t.Error("GET / has no X-Request-Id")
	}
	req := env.Client.NewRequest(http.MethodHead, "/", nil)
	if head := env.Client.Do(req); head.Status != http.StatusOK || len(head.Body) != 0 {
		t.Errorf("HEAD / = %d with %d bytes", head.Status, len(head.Body))
	}
	req = env.Client.NewRequest(http.MethodGet, "/assets/app-1a2b.js", nil)
	req.Header.Set("If-None-Match", env.Client.Get("/assets/app-1a2b.js").Header.Get("ETag"))
	if again := env.Client.Do(req); again.Status != http.StatusNotModified {
		t.Errorf("GET /assets/app-1a2b.js with its ETag = %d, want 304", again.Status)
	}
	for _, path := range []string{"/channels/general", "/api/v1/index.html", "/assets/missing.js"} {
		if res := env.Client.Get(path); res.Status != http.StatusNotFound || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s = %d %s, want the 404 problem", path, res.Status, res.Header.Get("Content-Type"))
		}
	}
	if me := env.Client.Get("/api/v1/me"); me.Status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/me without a token = %d, want 401", me.Status)
	}
}
