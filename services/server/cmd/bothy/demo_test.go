package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"bothy.example.com/server/internal/pglocal"
)

// demoJSONOut is what bothy admin demo --json prints, as far as these tests read it.
type demoJSONOut struct {
	Created map[string]int `json:"created"`
	People  []struct {
		Handle      string `json:"handle"`
		Kind        string `json:"kind"`
		PrincipalID string `json:"principal_id"`
		Token       string `json:"token"`
	} `json:"people"`
	Spaces []struct {
		Name     string `json:"name"`
		Channels []struct {
			Name string `json:"name"`
		} `json:"channels"`
	} `json:"spaces"`
	Threads []struct {
		Key      string `json:"key"`
		Messages int    `json:"messages"`
	} `json:"threads"`
	BaseURL string `json:"base_url"`
}

// demoCurl is one curl command the table output of bothy admin demo prints.
var demoCurl = regexp.MustCompile(`(?m)^  curl -H "Authorization: Bearer (bothy_[A-Za-z0-9_-]{43})" (http://\S+)/api/v1/spaces$`)

// getSpaces sends GET /api/v1/spaces with token and returns the status and the names.
func getSpaces(t *testing.T, base, token string) (int, []string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/spaces", nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/spaces: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var list struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatalf("decode listSpaces: %v", err)
		}
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	return resp.StatusCode, names
}

// TestAdminDemoBesideMakeRun is make run, then make demo twice in another terminal: bothy
// serve --bootstrap-owner on the embedded default creates Alex; bothy admin demo attaches to
// its cluster, reuses Alex and builds the world; a second run creates nothing. Every printed
// token works against the serving process, which keeps serving (and its cluster running)
// after the demo exits; no token reaches a log.
func TestAdminDemoBesideMakeRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(tempDir(t), "embedded")
	env := environ("BOTHY_EMBEDDED_DIR="+dir, "BOTHY_HTTP_ADDR=127.0.0.1:0", "BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s")
	p := start(t, env, "serve", "--bootstrap-owner")
	base := p.baseURL(embeddedWithin)
	p.waitReady(base, embeddedWithin)
	owner := announcedToken(t, p.output(), base)
	if owner == "" {
		t.Fatalf("serve --bootstrap-owner printed no owner token; stdout:\n%s", p.output())
	}

	out, stderr, code := runOut(t, env, "admin", "demo", "--json")
	if code != 0 {
		t.Fatalf("bothy admin demo --json exited %d; stderr: %s", code, stderr)
	}
	var first demoJSONOut
	if strings.Count(strings.TrimSuffix(out, "\n"), "\n") != 0 || json.Unmarshal([]byte(out), &first) != nil {
		t.Fatalf("bothy admin demo --json printed %q, want one line of JSON", out)
	}
	want := map[string]int{"principals": 4, "spaces": 2, "channels": 3, "grants": 5, "threads": 4, "messages": 10, "read_states": 1, "drafts": 2}
	for k, n := range want {
		if first.Created[k] != n {
			t.Fatalf("the first demo run created %v, want %v (the owner of make run reused)", first.Created, want)
		}
	}
	if len(first.People) != 5 || first.People[0].Handle != "alex" || first.People[3].Kind != "agent" || first.People[4].Handle != "echo" || first.People[4].Kind != "agent" || len(first.Spaces) != 2 || len(first.Threads) != 4 {
		t.Fatalf("demo output %+v", first)
	}
	if first.BaseURL != "http://127.0.0.1:0" {
		t.Fatalf("base_url %q, want http.addr's http://127.0.0.1:0", first.BaseURL)
	}
	logs := stderr

	echoFile := filepath.Join(tempDir(t), "echo.token")
	out, stderr, code = runOut(t, env, "admin", "demo", "--echo-token-file", echoFile)
	if code != 0 {
		t.Fatalf("second bothy admin demo exited %d; stderr: %s", code, stderr)
	}
	logs += stderr
	// make demo starts the echo agent with the token this file holds.
	echoToken, err := os.ReadFile(echoFile) //nolint:gosec // a file in the test's own temporary directory.
	if err != nil {
		t.Fatalf("the echo token file: %v", err)
	}
	if fi, err := os.Stat(echoFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the echo token file's mode: %v (%v), want 0600", fi.Mode(), err)
	}
	if status := getMe(t, base, strings.TrimSpace(string(echoToken))); status != http.StatusOK || !strings.Contains(out, strings.TrimSpace(string(echoToken))) {
		t.Fatalf("GET /api/v1/me with the echo token file's token = %d (printed in the table: %v), want 200 and the token of this run", status, strings.Contains(out, strings.TrimSpace(string(echoToken))))
	}
	for _, s := range []string{"nothing was created", "Support (#tickets, #escalations), Marketing (#campaigns)", "@alex", "@sam", "@robin", "@helper", "@echo", "member of Support #tickets", "@echo hello"} {
		if !strings.Contains(out, s) {
			t.Fatalf("the second run's output lacks %q:\n%s", s, out)
		}
	}
	curls := demoCurl.FindAllStringSubmatch(out, -1)
	if len(curls) != 2 {
		t.Fatalf("the output has %d curl commands for /api/v1/spaces, want Sam's and Robin's:\n%s", len(curls), out)
	}
	for i, wantSpaces := range [][]string{{"Marketing", "Support"}, {"Support"}} {
		status, names := getSpaces(t, base, curls[i][1])
		if status != http.StatusOK || strings.Join(names, ",") != strings.Join(wantSpaces, ",") {
			t.Fatalf("curl %d: listSpaces = %d %v, want %v", i+1, status, names, wantSpaces)
		}
	}

	for _, person := range first.People {
		if status := getMe(t, base, person.Token); status != http.StatusOK {
			t.Fatalf("GET /api/v1/me with %s's token from the first run = %d, want 200", person.Handle, status)
		}
		if strings.Contains(out, person.Token) {
			t.Fatalf("the second run printed %s's token of the first run again", person.Handle)
		}
	}
	if status := getMe(t, base, owner); status != http.StatusOK {
		t.Fatalf("the owner's token of make run stopped working: %d", status)
	}
	// The demo attached to the cluster of the serving process and left it running.
	p.waitReady(base, readyWithin)
	p.stop(syscall.SIGINT, 5*time.Second+exitMargin)
	if procs, err := pglocal.Processes(filepath.Join(dir, "pgdata")); err != nil || len(procs) != 0 {
		t.Fatalf("postgres processes %v (%v) remain after bothy serve exited", procs, err)
	}
	logs += p.log()
	for _, person := range first.People {
		if strings.Contains(logs, person.Token) {
			t.Fatalf("a log holds %s's token:\n%s", person.Handle, logs)
		}
	}
}

// TestAdminDemoCommandLine covers the usage mistakes of bothy admin demo (exit code 2).
func TestAdminDemoCommandLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"admin", "demo", "extra"},
		{"admin", "demo", "--jsn"},
	} {
		out, stderr, code := runOut(t, environ(), args...)
		if code != 2 || out != "" || !strings.Contains(stderr, "admin demo") {
			t.Fatalf("bothy %v = %d with stdout %q, want 2 and nothing; stderr: %s", args, code, out, stderr)
		}
	}
	out, _, code := runOut(t, environ(), "admin", "demo", "-h")
	if code != 0 || out != "" {
		t.Fatalf("bothy admin demo -h = %d with stdout %q, want 0 (the flags go to stderr)", code, out)
	}
}
