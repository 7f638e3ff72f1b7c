package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"bothy.example.com/server/internal/pgtest"
)

// curlLine is the first curl command bothy serve --bootstrap-owner prints.
var curlLine = regexp.MustCompile(`(?m)^  curl -H "Authorization: Bearer (bothy_[A-Za-z0-9_-]{43})" (http://\S+)/api/v1/me$`)

// announcedToken returns the owner token bothy serve --bootstrap-owner
// printed on stdout, "" when it printed nothing. It fails the test when the
// output is there but malformed: the token must stand on a line of its own
// and in a curl command aimed at base.
func announcedToken(t *testing.T, stdout, base string) string {
	t.Helper()
	if stdout == "" {
		return ""
	}
	m := curlLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("stdout has no curl command with a token:\n%s", stdout)
	}
	token, url := m[1], m[2]
	if url != base {
		t.Fatalf("the curl command aims at %s, want %s", url, base)
	}
	if !strings.Contains(stdout, "\n  "+token+"\n") {
		t.Fatalf("the token does not stand on a line of its own:\n%s", stdout)
	}
	return token
}

// getMe sends GET /api/v1/me with token and returns the status.
func getMe(t *testing.T, base, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/me", nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/me: %v", err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// migrated returns the URL of a database bothy migrate prepared (the
// instance exists).
func migrated(t *testing.T) string {
	t.Helper()
	url := pgtest.URL(t)
	if _, stderr, code := runOut(t, environ("BOTHY_DATABASE_URL="+url), "migrate"); code != 0 {
		t.Fatalf("bothy migrate exited %d; stderr: %s", code, stderr)
	}
	return url
}

// oneJSONLine decodes stdout, which must be one line holding exactly the
// given string members, and returns them.
func oneJSONLine(t *testing.T, stdout string, members ...string) map[string]string {
	t.Helper()
	if strings.Count(strings.TrimSuffix(stdout, "\n"), "\n") != 0 {
		t.Fatalf("stdout is not one line: %q", stdout)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout %q is not a JSON object of strings: %v", stdout, err)
	}
	if len(got) != len(members) {
		t.Fatalf("stdout %q has members %v, want exactly %v", stdout, got, members)
	}
	for _, m := range members {
		if got[m] == "" {
			t.Fatalf("stdout %q lacks %s", stdout, m)
		}
	}
	return got
}

// TestAdminBootstrapAndToken runs bothy admin bootstrap twice (the second is
// refused with a clear error and exit code 1) and bothy admin token, then
// serves and checks that both printed tokens authenticate as the owner and
// that no token reached the log.
func TestAdminBootstrapAndToken(t *testing.T) {
	t.Parallel()
	env := environ("BOTHY_DATABASE_URL="+migrated(t), "BOTHY_HTTP_ADDR=127.0.0.1:0", "BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s")

	out, stderr, code := runOut(t, env, "admin", "bootstrap", "--name", "Alex", "--handle", "alex", "--email", "alex@example.com")
	if code != 0 {
		t.Fatalf("bothy admin bootstrap exited %d; stderr: %s", code, stderr)
	}
	owner := oneJSONLine(t, out, "principal_id", "token")
	if strings.Contains(stderr, owner["token"]) {
		t.Fatalf("the log holds the token: %s", stderr)
	}

	out, stderr, code = runOut(t, env, "admin", "bootstrap", "--name", "Sam", "--handle", "sam", "--email", "sam@example.com")
	if code != 1 || out != "" {
		t.Fatalf("second bothy admin bootstrap = %d with stdout %q, want 1 and nothing; stderr: %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "has an owner already") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 && !strings.Contains(stderr, `"level":"ERROR"`) {
		t.Fatalf("the refusal does not say why: %s", stderr)
	}

	out, stderr, code = runOut(t, env, "admin", "token", "--principal", owner["principal_id"])
	if code != 0 {
		t.Fatalf("bothy admin token exited %d; stderr: %s", code, stderr)
	}
	second := oneJSONLine(t, out, "token", "token_id")
	if second["token"] == owner["token"] || strings.Contains(stderr, second["token"]) {
		t.Fatalf("admin token printed the bootstrap token again or logged it; stderr: %s", stderr)
	}

	p := start(t, env, "serve", "--roles", "api")
	base := p.baseURL(serveWithin)
	p.waitReady(base, readyWithin)
	for _, tok := range []string{owner["token"], second["token"]} {
		if status := getMe(t, base, tok); status != http.StatusOK {
			t.Fatalf("GET /api/v1/me with a printed token = %d, want 200", status)
		}
	}
	if status := getMe(t, base, "bothy_"+strings.Repeat("A", 43)); status != http.StatusUnauthorized {
		t.Fatalf("GET /api/v1/me with an unknown token = %d, want 401", status)
	}
	p.stop(syscall.SIGTERM, 5*time.Second+exitMargin)
	for _, tok := range []string{owner["token"], second["token"]} {
		if strings.Contains(p.log(), tok) {
			t.Fatalf("the server's log holds a token. Log:\n%s", p.log())
		}
	}
}

// TestAdminCommandLine covers the mistakes an operator can make with bothy
// admin: usage errors exit 2, refused requests exit 1 with one JSON error
// line naming the problem.
func TestAdminCommandLine(t *testing.T) {
	t.Parallel()
	db := "BOTHY_DATABASE_URL=" + migrated(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{name: "no subcommand", args: []string{"admin"}, code: 2, inStderr: "missing subcommand"},
		{name: "unknown subcommand", args: []string{"admin", "promote"}, code: 2, inStderr: `unknown subcommand "promote"`},
		{name: "bootstrap without email", args: []string{"admin", "bootstrap", "--name", "Alex", "--handle", "alex"}, code: 2, inStderr: "--email"},
		{name: "bootstrap with a bad handle", args: []string{"admin", "bootstrap", "--name", "Alex", "--handle", "a", "--email", "alex@example.com"}, code: 1, inStderr: "handle"},
		{name: "token without principal", args: []string{"admin", "token"}, code: 2, inStderr: "--principal"},
		{name: "token for a malformed id", args: []string{"admin", "token", "--principal", "alex"}, code: 1, inStderr: "principal"},
		{name: "token for nobody", args: []string{"admin", "token", "--principal", "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"}, code: 1, inStderr: "No principal has the id"},
		{name: "token revoke without token", args: []string{"admin", "token", "revoke"}, code: 2, inStderr: "--token"},
		{name: "token list without principal", args: []string{"admin", "token", "list"}, code: 2, inStderr: "--principal"},
		{name: "token revoke of a malformed id", args: []string{"admin", "token", "revoke", "--token", "phone"}, code: 1, inStderr: "token"},
		{name: "token revoke of nothing", args: []string{"admin", "token", "revoke", "--token", "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"}, code: 1, inStderr: "not found"},
		{name: "principal without subcommand", args: []string{"admin", "principal"}, code: 2, inStderr: "missing subcommand"},
		{name: "principal deactivate without principal", args: []string{"admin", "principal", "deactivate"}, code: 2, inStderr: "--principal"},
		{name: "principal deactivate of nobody", args: []string{"admin", "principal", "deactivate", "--principal", "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"}, code: 1, inStderr: "not found"},
		{name: "flags without subcommand", args: []string{"admin", "flags"}, code: 2, inStderr: "missing subcommand"},
		{name: "flags define without key", args: []string{"admin", "flags", "define"}, code: 2, inStderr: "--key"},
		{name: "flags set without value", args: []string{"admin", "flags", "set", "--key", "threads.summaries", "--target", "kind:app"}, code: 2, inStderr: "--enabled"},
		{name: "flags set of an unknown flag", args: []string{"admin", "flags", "set", "--key", "threads.summaries", "--target", "kind:app", "--enabled", "true"}, code: 1, inStderr: "not found"},
		{name: "flags define with a bad default", args: []string{"admin", "flags", "define", "--key", "threads.summaries", "--default", "yes"}, code: 2, inStderr: "--default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, stderr, code := runOut(t, environ(db), tc.args...)
			if code != tc.code || out != "" {
				t.Fatalf("exit code %d with stdout %q, want %d and nothing; stderr: %s", code, out, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Fatalf("stderr does not mention %q: %s", tc.inStderr, stderr)
			}
			if tc.code == 1 {
				var rec struct {
					Level string `json:"level"`
					Error string `json:"error"`
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil || rec.Level != "ERROR" || rec.Error == "" {
					t.Fatalf("the failure's last line is not a JSON error: %s", stderr)
				}
			}
		})
	}
}

// TestAdminFlags defines a flag, overrides it for a kind and a principal,
// clears an override, lists and deletes it, checking each JSON answer.
func TestAdminFlags(t *testing.T) {
	t.Parallel()
	env := environ("BOTHY_DATABASE_URL=" + migrated(t))
	type flag struct {
		Key            string `json:"key"`
		Description    string `json:"description"`
		DefaultEnabled bool   `json:"default_enabled"`
		Overrides      []struct {
			Target  string `json:"target"`
			Enabled bool   `json:"enabled"`
		} `json:"overrides"`
		Version int64 `json:"version"`
	}
	admin := func(args ...string) flag {
		t.Helper()
		out, stderr, code := runOut(t, env, append([]string{"admin", "flags"}, args...)...)
		if code != 0 {
			t.Fatalf("bothy admin flags %v exited %d; stderr: %s", args, code, stderr)
		}
		var f flag
		if err := json.Unmarshal([]byte(out), &f); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		return f
	}
	const sam = "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"
	f := admin("define", "--key", "threads.summaries", "--description", "Summaries of long threads", "--default", "false")
	if f.Key != "threads.summaries" || f.DefaultEnabled || f.Overrides == nil || len(f.Overrides) != 0 || f.Version != 1 {
		t.Fatalf("define = %+v", f)
	}
	admin("set", "--key", "threads.summaries", "--target", "kind:agent", "--enabled", "true")
	f = admin("set", "--key", "threads.summaries", "--target", "principal:"+sam, "--enabled", "false")
	if len(f.Overrides) != 2 || f.Overrides[0].Target != "kind:agent" || !f.Overrides[0].Enabled || f.Overrides[1].Target != "principal:"+sam {
		t.Fatalf("set = %+v", f)
	}
	f = admin("clear", "--key", "threads.summaries", "--target", "kind:agent")
	if len(f.Overrides) != 1 {
		t.Fatalf("clear = %+v", f)
	}

	out, stderr, code := runOut(t, env, "admin", "flags", "list")
	var list struct {
		Flags []flag `json:"flags"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Flags) != 1 || list.Flags[0].Key != "threads.summaries" {
		t.Fatalf("list = %d %q; stderr: %s", code, out, stderr)
	}
	out, stderr, code = runOut(t, env, "admin", "flags", "delete", "--key", "threads.summaries")
	if code != 0 || strings.TrimSpace(out) != `{"deleted":"threads.summaries"}` {
		t.Fatalf("delete = %d %q; stderr: %s", code, out, stderr)
	}
	out, _, _ = runOut(t, env, "admin", "flags", "list")
	if strings.TrimSpace(out) != `{"flags":[]}` {
		t.Fatalf("list after delete = %q, want no flags", out)
	}
}

// TestAdminTokensAndPrincipals lists and revokes tokens and deactivates and
// reactivates a principal with bothy admin, against a running server: a
// revoked token and a deactivated principal's token answer 401 at once; the
// last active owner cannot be deactivated; no secret is printed.
func TestAdminTokensAndPrincipals(t *testing.T) {
	t.Parallel()
	env := environ("BOTHY_DATABASE_URL="+migrated(t), "BOTHY_HTTP_ADDR=127.0.0.1:0", "BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s")
	out, stderr, code := runOut(t, env, "admin", "bootstrap", "--name", "Alex", "--handle", "alex", "--email", "alex@example.com")
	if code != 0 {
		t.Fatalf("bootstrap exited %d; stderr: %s", code, stderr)
	}
	owner := oneJSONLine(t, out, "principal_id", "token")
	out, stderr, code = runOut(t, env, "admin", "token", "--principal", owner["principal_id"])
	if code != 0 {
		t.Fatalf("admin token exited %d; stderr: %s", code, stderr)
	}
	second := oneJSONLine(t, out, "token", "token_id")

	p := start(t, env, "serve", "--roles", "api")
	base := p.baseURL(serveWithin)
	p.waitReady(base, readyWithin)

	out, stderr, code = runOut(t, env, "admin", "token", "list", "--principal", owner["principal_id"])
	if code != 0 || strings.Contains(out, "bothy_") {
		t.Fatalf("token list exited %d or printed a secret: %s; stderr: %s", code, out, stderr)
	}
	var list struct {
		Tokens []map[string]any `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Tokens) != 2 || list.Tokens[1]["id"] != second["token_id"] {
		t.Fatalf("token list = %s (%v), want the bootstrap token and the second", out, err)
	}

	for range 2 { // idempotent
		out, stderr, code = runOut(t, env, "admin", "token", "revoke", "--token", second["token_id"])
		if code != 0 || !strings.Contains(out, `"revoked_at"`) {
			t.Fatalf("token revoke exited %d: %s; stderr: %s", code, out, stderr)
		}
	}
	if status := getMe(t, base, second["token"]); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/me with the revoked token = %d, want 401", status)
	}
	if status := getMe(t, base, owner["token"]); status != http.StatusOK {
		t.Errorf("GET /api/v1/me with the owner's other token = %d, want 200", status)
	}

	out, stderr, code = runOut(t, env, "admin", "principal", "deactivate", "--principal", owner["principal_id"])
	if code != 1 || out != "" || !strings.Contains(stderr, "last active owner") {
		t.Fatalf("deactivating the last owner = %d, %q; stderr: %s; want exit 1 saying why", code, out, stderr)
	}

	sam := createPerson(t, base, owner["token"], "sam")
	out, _, code = runOut(t, env, "admin", "token", "--principal", sam)
	if code != 0 {
		t.Fatalf("admin token for Sam exited %d", code)
	}
	samToken := oneJSONLine(t, out, "token", "token_id")["token"]
	out, stderr, code = runOut(t, env, "admin", "principal", "deactivate", "--principal", sam)
	if code != 0 || !strings.Contains(out, `"deactivated_at"`) {
		t.Fatalf("principal deactivate exited %d: %s; stderr: %s", code, out, stderr)
	}
	if status := getMe(t, base, samToken); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/me as deactivated Sam = %d, want 401", status)
	}
	out, stderr, code = runOut(t, env, "admin", "principal", "reactivate", "--principal", sam)
	if code != 0 || strings.Contains(out, `"deactivated_at"`) {
		t.Fatalf("principal reactivate exited %d: %s; stderr: %s", code, out, stderr)
	}
	if status := getMe(t, base, samToken); status != http.StatusOK {
		t.Errorf("GET /api/v1/me as reactivated Sam = %d, want 200", status)
	}
	p.stop(syscall.SIGTERM, 5*time.Second+exitMargin)
}

// createPerson creates a person with the handle through the API as the
// owner and returns its id.
func createPerson(t *testing.T, base, token, handle string) string {
	t.Helper()
	body := strings.NewReader(`{"display_name":"` + handle + `","handle":"` + handle + `","email":"` + handle + `@example.com"}`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/people", body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST /api/v1/people: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var p struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&p) != nil || p.ID == "" {
		t.Fatalf("POST /api/v1/people = %d", resp.StatusCode)
	}
	return p.ID
}
