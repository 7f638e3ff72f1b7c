package edge

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// The origins of the CORS tests: one listed in http.cors.allowed_origins, one not.
const (
	allowedOrigin = "https://app.example.com"
	refusedOrigin = "https://elsewhere.example.com"
)

// corsWorld is a ChatWorld whose http.cors.allowed_origins lists allowedOrigin (in capitals,
// to show the list is compared like browsers send origins) and a dev server, with
// http.cors.max_age at 90s.
func corsWorld(t *testing.T) *e2etest.ChatWorld {
	t.Helper()
	return e2etest.GatewayWorld(t,
		wiretest.WithSetting(config.HTTPCORSAllowedOrigins, " https://App.example.com , http://localhost:5173"),
		wiretest.WithSetting(config.HTTPCORSMaxAge, "90s"))
}

// rawDo sends method path with the header pairs (name, value, ...) without the validating
// client (a preflight is no operation of the document and has no problem body).
func rawDo(t *testing.T, base, method, path string, header ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: body}
}

// varyOrigin reports whether the Vary header names Origin.
func varyOrigin(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Origin") {
				return true
			}
		}
	}
	return false
}

// corsHeaders are the headers of a response that only CORS sets.
func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// splitList splits a comma-separated header value into its trimmed, lower-case members.
func splitList(v string) []string {
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}

// TestCORSPreflight: a preflight from a listed origin is answered 204 before authentication
// and before the router's 405, with the origin echoed, the API's methods and request headers,
// and the max age of http.cors.max_age; one from an unlisted origin gets no CORS header and is
// an ordinary OPTIONS request (405 with Allow). Vary: Origin on both.
func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	w := corsWorld(t)
	base := w.Env.Server.URL
	path := "/api/v1/threads/" + w.TicketThread.String() + "/messages"

	ok := rawDo(t, base, http.MethodOptions, path,
		"Origin", allowedOrigin,
		"Access-Control-Request-Method", http.MethodPost,
		"Access-Control-Request-Headers", "authorization, content-type, idempotency-key")
	if ok.status != http.StatusNoContent || len(ok.body) != 0 {
		t.Fatalf("allowed preflight = %d %q, want 204 without a body", ok.status, ok.body)
	}
	h := ok.header
	if got := h.Get("Access-Control-Allow-Origin"); got != allowedOrigin {
		t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, allowedOrigin)
	}
	for _, m := range []string{"get", "post", "put", "patch", "delete"} {
		if !slices.Contains(splitList(h.Get("Access-Control-Allow-Methods")), m) {
			t.Errorf("Access-Control-Allow-Methods = %q lacks %s", h.Get("Access-Control-Allow-Methods"), m)
		}
	}
	for _, name := range []string{"authorization", "content-type", "idempotency-key", "if-none-match"} {
		if !slices.Contains(splitList(h.Get("Access-Control-Allow-Headers")), name) {
			t.Errorf("Access-Control-Allow-Headers = %q lacks %s", h.Get("Access-Control-Allow-Headers"), name)
		}
	}
	if got := h.Get("Access-Control-Max-Age"); got != "90" {
		t.Errorf("Access-Control-Max-Age = %q, want 90 (http.cors.max_age)", got)
	}
	if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
		t.Errorf("Access-Control-Allow-Credentials = %q, want none (bearer tokens, no cookies)", got)
	}
	if !varyOrigin(h) || h.Get("X-Request-Id") == "" {
		t.Errorf("allowed preflight headers %v lack Vary: Origin or X-Request-Id", h)
	}

	// The second listed origin works too, and so does a path no operation has.
	dev := rawDo(t, base, http.MethodOptions, "/api/v1/nothing-here",
		"Origin", "http://localhost:5173", "Access-Control-Request-Method", http.MethodGet)
	if dev.status != http.StatusNoContent || dev.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Errorf("preflight from the second origin = %d %v", dev.status, dev.header)
	}

	refused := rawDo(t, base, http.MethodOptions, path,
		"Origin", refusedOrigin, "Access-Control-Request-Method", http.MethodPost)
	if refused.status != http.StatusMethodNotAllowed || refused.header.Get("Allow") == "" {
		t.Errorf("refused preflight = %d %v, want the ordinary 405 with Allow", refused.status, refused.header)
	}
	if got := corsHeaders(refused.header); len(got) != 0 {
		t.Errorf("refused preflight has CORS headers %v", got)
	}
	if !varyOrigin(refused.header) {
		t.Errorf("refused preflight lacks Vary: Origin: %v", refused.header)
	}
}

// TestCORSActualRequests: a request from a listed origin carries Access-Control-Allow-Origin
// (the origin, never *) and exposes ETag, X-Request-Id, Idempotency-Replayed and Retry-After,
// on a success and on the problems a browser must be able to read (401, 404, the router's
// 405); one from an unlisted origin, or without Origin, proceeds as usual with no CORS
// header. Vary: Origin on every answer.
func TestCORSActualRequests(t *testing.T) {
	t.Parallel()
	w := corsWorld(t)
	for _, tc := range []struct {
		name   string
		actor  e2etest.Actor
		method string
		path   string
		status int
	}{
		{"snapshot", w.Sam, http.MethodGet, "/api/v1/sync/snapshot", http.StatusOK},
		{"no token", e2etest.Actor{Name: "nobody"}, http.MethodGet, "/api/v1/sync/snapshot", http.StatusUnauthorized},
		{"unknown thread", w.Sam, http.MethodGet, "/api/v1/threads/" + w.CampaignFirstMsg.String() + "/messages", http.StatusNotFound},
		{"unknown path", w.Sam, http.MethodGet, "/api/v1/nothing-here", http.StatusNotFound},
		{"wrong method", w.Sam, http.MethodPatch, "/api/v1/sync/snapshot", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allowed := w.Do(t, tc.actor, tc.method, tc.path, "", "Origin", allowedOrigin)
			if allowed.Status != tc.status {
				t.Fatalf("from the allowed origin: %d, want %d; body %s", allowed.Status, tc.status, allowed.Body)
			}
			if tc.status >= 400 {
				allowed.Problem(t)
			}
			h := allowed.Header
			if got := h.Get("Access-Control-Allow-Origin"); got != allowedOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, allowedOrigin)
			}
			for _, name := range []string{"etag", "x-request-id", "idempotency-replayed", "retry-after"} {
				if !slices.Contains(splitList(h.Get("Access-Control-Expose-Headers")), name) {
					t.Errorf("Access-Control-Expose-Headers = %q lacks %s", h.Get("Access-Control-Expose-Headers"), name)
				}
			}
			if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials = %q, want none", got)
			}
			if !varyOrigin(h) {
				t.Errorf("no Vary: Origin in %v", h)
			}

			for _, origin := range []string{refusedOrigin, "null", ""} {
				var header []string
				if origin != "" {
					header = []string{"Origin", origin}
				}
				r := w.Do(t, tc.actor, tc.method, tc.path, "", header...)
				if r.Status != tc.status {
					t.Errorf("Origin %q: %d, want %d as without CORS", origin, r.Status, tc.status)
				}
				if got := corsHeaders(r.Header); len(got) != 0 {
					t.Errorf("Origin %q: CORS headers %v", origin, got)
				}
				if !varyOrigin(r.Header) {
					t.Errorf("Origin %q: no Vary: Origin in %v", origin, r.Header)
				}
			}
		})
	}
}

// TestCORSIdempotentReplay: the replay of a POST carries the CORS headers of the request
// that asked for it, like the first answer, so a browser can read Idempotency-Replayed.
func TestCORSIdempotentReplay(t *testing.T) {
	t.Parallel()
	w := corsWorld(t)
	path := "/api/v1/threads/" + w.CampaignThread.String() + "/messages"
	body := `{"content_md":"Posted from the web client"}`
	first := w.Must(t, w.Sam, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "web-1", "Origin", allowedOrigin)
	again := w.Must(t, w.Sam, http.MethodPost, path, body, http.StatusCreated, nil, "Idempotency-Key", "web-1", "Origin", "http://localhost:5173")
	if first.Header.Get("Access-Control-Allow-Origin") != allowedOrigin {
		t.Errorf("first answer: Access-Control-Allow-Origin = %q", first.Header.Get("Access-Control-Allow-Origin"))
	}
	if again.Header.Get("Idempotency-Replayed") != "true" || again.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Errorf("replay headers %v, want Idempotency-Replayed and the replay's own origin", again.Header)
	}
}

// TestCORSGatewayFollowsTheSharedList: the gateway's Origin check reads the same list,
// http.cors.allowed_origins: a page of a listed origin opens it, one of another origin is
// refused with 403 and no CORS header.
func TestCORSGatewayFollowsTheSharedList(t *testing.T) {
	t.Parallel()
	w := corsWorld(t)
	c, refusal, err := e2etest.DialGateway(t, w.Env.Server.URL, w.Sam.Token, "Origin", allowedOrigin)
	if err != nil {
		t.Fatalf("upgrade from a listed origin refused: %v (%+v)", err, refusal)
	}
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")

	_, refusal, err = e2etest.DialGateway(t, w.Env.Server.URL, w.Sam.Token, "Origin", refusedOrigin)
	if err == nil {
		t.Fatal("upgrade from an unlisted origin accepted")
	}
	if refusal.Status != http.StatusForbidden {
		t.Errorf("unlisted origin: status %d, want 403", refusal.Status)
	}
	if got := corsHeaders(refusal.Header); len(got) != 0 {
		t.Errorf("unlisted origin: CORS headers %v", got)
	}
}

// TestCORSRejectsBadOrigins: a listed origin that is not scheme://host[:port] stops the
// process at start, naming the key.
func TestCORSRejectsBadOrigins(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"app.example.com", "https://*.example.com", "https://app.example.com/chat", "*"} {
		cfg := e2etest.LoadConfig(t, map[config.Key]string{
			config.DatabaseURL:            "postgres://bothy@127.0.0.1:1/bothy",
			config.HTTPCORSAllowedOrigins: bad,
		})
		_, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{})
		if err == nil || !strings.Contains(err.Error(), config.HTTPCORSAllowedOrigins.Name) {
			t.Errorf("origin %q: error %v, want one naming %s", bad, err, config.HTTPCORSAllowedOrigins.Name)
		}
	}
}
