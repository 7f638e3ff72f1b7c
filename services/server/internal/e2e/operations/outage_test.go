package operations

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/pglocal"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// outageRetryBase is the http.unavailable_retry_after of the outage test: every Retry-After
// lies between it and twice it.
const outageRetryBase = 3 * time.Second

// requireRetryAfter checks that a 503 says when to retry, within the configured window.
func requireRetryAfter(t *testing.T, what string, h http.Header) {
	t.Helper()
	v := h.Get("Retry-After")
	n, err := strconv.Atoi(v)
	if err != nil || n < int(outageRetryBase.Seconds()) || n > 2*int(outageRetryBase.Seconds()) {
		t.Errorf("%s: Retry-After %q, want whole seconds in [%v, %v]", what, v, outageRetryBase, 2*outageRetryBase)
	}
}

// TestDatabaseOutage stops the App's PostgreSQL mid-test: a REST read, a REST write and the
// gateway's upgrade answer 503 unavailable with Retry-After (never 500), a gateway connection
// that needs the database closes with 1013 after an error frame unavailable with
// retry_after_ms, /readyz says unavailable; when the server is back on the same port the
// same requests succeed without restarting the App.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, err := os.MkdirTemp("", "bothy-outage-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// The cluster's server runs as the postgres account, which must traverse it.
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // a directory, traversable on purpose.
		t.Fatalf("chmod: %v", err)
	}
	opts := pglocal.Options{Dir: filepath.Join(dir, "pgdata"), Trust: true, Fsync: false}
	cluster, err := pglocal.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(context.Background()); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	url := cluster.URL(pglocal.DefaultDatabase)
	if _, err := wire.Migrate(ctx, e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: url}), url, wiretest.TestLogger(t)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	env := wiretest.New(t, wiretest.WithDatabaseURL(url),
		wiretest.WithSetting(config.HTTPUnavailableRetryAfter, outageRetryBase.String()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2etest.WaitTimeout)
		defer cancel()
		if err := env.App.Gateway().Shutdown(ctx); err != nil {
			t.Errorf("gateway shutdown: %v", err)
		}
	})
	e2etest.RunTail(t, env.App.Tail())
	owner, err := e2etest.Bootstrap(ctx, env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	alex := e2etest.Actor{Name: "Alex", ID: owner.PrincipalID, Token: owner.Token.Reveal()}
	w := &e2etest.World{Env: env, Admin: alex}
	w.Must(t, alex, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, nil)
	w.Must(t, alex, http.MethodPost, "/api/v1/spaces", `{"name":"Before"}`, http.StatusCreated, nil)
	// A browser's connection, upgraded before the outage, authenticates after it.
	browser := e2etest.MustDial(t, env.Server.URL, "")

	if err := cluster.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}

	read := w.Do(t, alex, http.MethodGet, "/api/v1/spaces", "")
	read.RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
	requireRetryAfter(t, "listSpaces", read.Header)
	write := w.Do(t, alex, http.MethodPost, "/api/v1/spaces", `{"name":"During"}`)
	write.RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
	requireRetryAfter(t, "createSpace", write.Header)
	for _, leak := range []string{"connect", "refused", "127.0.0.1", "SQLSTATE"} {
		if strings.Contains(string(read.Body)+string(write.Body), leak) {
			t.Errorf("a 503 body leaks %q: %s %s", leak, read.Body, write.Body)
		}
	}
	ready := env.Client.Get("/readyz")
	ready.RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
	requireRetryAfter(t, "readyz", ready.Header)

	// The upgrade with a token: a 503 problem with Retry-After.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.Server.URL+gateway.Path, nil)
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Authorization": "Bearer " + alex.Token,
	} {
		req.Header.Set(k, v)
	}
	resp, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var p problem.Problem
	if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != http.StatusServiceUnavailable || p.Code != "unavailable" ||
		resp.Header.Get("Content-Type") != problem.ContentType {
		t.Errorf("upgrade during the outage: %d %s %s, want a 503 unavailable problem", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	requireRetryAfter(t, "gateway upgrade", resp.Header)

	// The browser's auth frame needs the database: error unavailable, then 1013.
	browser.Send(`{"op":"auth","token":"` + alex.Token + `"}`)
	f := browser.Next()
	var retry struct {
		RetryAfterMS int64 `json:"retry_after_ms"`
	}
	_ = json.Unmarshal(f.Raw, &retry)
	if f.Op != "error" || f.Code != "unavailable" || retry.RetryAfterMS < outageRetryBase.Milliseconds() || retry.RetryAfterMS > 2*outageRetryBase.Milliseconds() {
		t.Errorf("frame %s, want error unavailable with retry_after_ms in [%v, %v]", f.Raw, outageRetryBase, 2*outageRetryBase)
	}
	if code, _ := browser.Closed(); code != websocket.StatusTryAgainLater {
		t.Errorf("close %d, want %d (try again later)", code, websocket.StatusTryAgainLater)
	}

	opts.Port = cluster.Port()
	cluster, err = pglocal.Start(ctx, opts)
	if err != nil {
		t.Fatalf("restart on port %d: %v", opts.Port, err)
	}
	// The pool reconnects on its own; the first request after the restart may still meet a
	// connection the old server closed, which is a 503 too, never a 500.
	deadline := time.Now().Add(e2etest.WaitTimeout)
	for {
		r := w.Do(t, alex, http.MethodGet, "/api/v1/spaces", "")
		if r.Status == http.StatusOK {
			break
		}
		r.RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
		if time.Now().After(deadline) {
			t.Fatalf("listSpaces still %d %s after the restart", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.Must(t, alex, http.MethodPost, "/api/v1/spaces", `{"name":"After"}`, http.StatusCreated, nil)
	if r := env.Client.Get("/readyz"); r.Status != http.StatusOK {
		t.Errorf("readyz after the restart: %d %s", r.Status, r.Body)
	}
	c := e2etest.MustDial(t, env.Server.URL, alex.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")
}
