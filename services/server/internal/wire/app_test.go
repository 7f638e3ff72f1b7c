package wire_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	url := "postgres://bothy@127.0.0.1:1/bothy"
	tests := []struct {
		name    string
		environ []string
		opts    wire.Options
		want    string
	}{
		{
			name:    "unknown role",
			environ: []string{"BOTHY_DATABASE_URL=" + url},
			opts:    wire.Options{Roles: []string{"gatway"}},
			want:    `unknown role "gatway"`,
		},
		{
			name:    "bad value",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_MAX_BODY_BYTES=lots"},
			want:    "http.max_body_bytes",
		},
		{
			name:    "typo in a key",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_ADRR=127.0.0.1:9"},
			want:    "BOTHY_HTTP_ADRR",
		},
		{
			name: "no database",
			want: "no database url",
		},
		{
			name:    "malformed database url",
			environ: []string{"BOTHY_DATABASE_URL=postgres://robin:hunter2@[::1"},
			want:    "not a valid PostgreSQL URL",
		},
		{
			name:    "no instance name",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_INSTANCE_NAME="},
			want:    "instance.name",
		},
		{
			name:    "idempotency keys that never live",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_IDEMPOTENCY_TTL=0s"},
			want:    "http.idempotency_ttl",
		},
		{
			name:    "negative compression threshold",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_COMPRESS_MIN_BYTES=-1"},
			want:    "http.compress_min_bytes",
		},
		{
			name:    "compression threshold beyond any body",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_COMPRESS_MIN_BYTES=4294967296"},
			want:    "http.compress_min_bytes",
		},
		{
			name:    "listener that never checks",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_LISTEN_CHECK_INTERVAL=0s"},
			want:    "sync.listen_check_interval",
		},
		{
			name:    "listener that cannot close",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_LISTEN_CLOSE_TIMEOUT=0s"},
			want:    "sync.listen_close_timeout",
		},
		{
			name:    "rollbacks that cannot run",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_DATABASE_ROLLBACK_TIMEOUT=0s"},
			want:    "database.rollback_timeout",
		},
		{
			name:    "idempotency keys never claimed",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_HTTP_IDEMPOTENCY_CLAIM_ATTEMPTS=0"},
			want:    "http.idempotency_claim_attempts",
		},
		{
			name:    "gh pages beyond GitHub's search",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_INGEST_GH_PAGE_SIZE=1001"},
			want:    "ingest.gh_page_size",
		},
		{
			name:    "a masker that looks at no run",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_INGEST_MASK_MIN_TOKEN_LENGTH=0"},
			want:    "ingest.mask_min_token_length",
		},
		{
			name:    "an entropy no byte carries",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_INGEST_MASK_MIN_ENTROPY_MILLIBITS=8001"},
			want:    "ingest.mask_min_entropy_millibits",
		},
		{
			name:    "tail without batches",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_TAIL_BATCH_SIZE=0"},
			want:    "sync.tail_batch_size",
		},
		{
			name:    "tail that never polls",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_TAIL_POLL_INTERVAL=0s"},
			want:    "sync.tail_poll_interval",
		},
		{
			name:    "maintenance that never runs",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_MAINTENANCE_INTERVAL=0s"},
			want:    "sync.maintenance_interval",
		},
		{
			name:    "partitions of one second",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_SYNC_PARTITION_INTERVAL=1s"},
			want:    "sync.partition_interval",
		},
		{
			name:    "no connections",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_DATABASE_MAX_CONNS=0"},
			want:    "database.max_conns",
		},
		{
			name:    "no scope cache",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_AUTHZ_SCOPE_CACHE_SIZE=0"},
			want:    "authz.scope_cache_size",
		},
		{
			name:    "empty grant pages",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_AUTHZ_GRANTS_PAGE_SIZE=0"},
			want:    "authz.grants_page_size",
		},
		{
			name:    "tokens expired before issued",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_IDENTITY_TOKEN_TTL=-1h"},
			want:    "identity.token_ttl",
		},
		{
			name:    "last use never written",
			environ: []string{"BOTHY_DATABASE_URL=" + url, "BOTHY_IDENTITY_LAST_USED_FLUSH_INTERVAL=0s"},
			want:    "identity.last_used_flush_interval",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Load("", tc.environ)
			if err != nil {
				t.Fatalf("load config: %v", err)
			}
			app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), tc.opts)
			if err == nil {
				app.Close()
				t.Fatalf("New succeeded, want an error mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("New error leaks the database password: %v", err)
			}
		})
	}
}

func TestServeDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	release := make(chan struct{})
	mount := func(r chi.Router) {
		r.Get("/test/slow", func(w http.ResponseWriter, _ *http.Request) {
			close(entered)
			<-release
			w.WriteHeader(http.StatusNoContent)
		})
	}
	cfg := e2etest.LoadConfig(t, map[config.Key]string{
		config.DatabaseURL:         pgtest.URL(t),
		config.HTTPShutdownTimeout: "30s",
	})
	app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Mount: mount})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	base, stop, done := e2etest.Serving(t, app)

	result := make(chan int, 1)
	go func() {
		resp, err := e2etest.Get(base + "/test/slow")
		if err != nil {
			result <- -1
			return
		}
		_ = resp.Body.Close()
		result <- resp.StatusCode
	}()
	select {
	case <-entered:
	case <-time.After(e2etest.WaitTimeout):
		t.Fatal("slow request never reached its handler")
	}
	stop()
	// Serve must wait for the in-flight request rather than return.
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if status := <-result; status != http.StatusNoContent {
		t.Fatalf("in-flight request got %d, want 204", status)
	}
	if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
		t.Fatalf("Serve after a clean drain = %v, want nil", err)
	}
}

func TestServeGivesUpAfterShutdownTimeout(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	mount := func(r chi.Router) {
		r.Get("/test/stuck", func(http.ResponseWriter, *http.Request) {
			close(entered)
			<-release
		})
	}
	cfg := e2etest.LoadConfig(t, map[config.Key]string{
		config.DatabaseURL:         pgtest.URL(t),
		config.HTTPShutdownTimeout: "200ms",
	})
	app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{Mount: mount})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	base, stop, done := e2etest.Serving(t, app)

	go func() {
		resp, err := e2etest.Get(base + "/test/stuck")
		if err == nil {
			_ = resp.Body.Close()
		}
	}()
	select {
	case <-entered:
	case <-time.After(e2etest.WaitTimeout):
		t.Fatal("stuck request never reached its handler")
	}
	start := time.Now()
	stop()
	err = e2etest.WaitServe(t, done, e2etest.WaitTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve = %v, want a drain error wrapping context.DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("Serve took %v to give up, want about the 200ms shutdown timeout", elapsed)
	}
}

func TestServeFailsOnBusyAddress(t *testing.T) {
	t.Parallel()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	cfg := e2etest.LoadConfig(t, map[config.Key]string{
		config.DatabaseURL: pgtest.URL(t),
		config.HTTPAddr:    ln.Addr().String(),
	})
	app, err := wire.New(t.Context(), cfg, wiretest.TestLogger(t), wire.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	if err := app.Serve(t.Context()); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Fatalf("Serve on a busy address = %v, want a listen error", err)
	}
}

// TestServeFlushesTokenUseAfterDrain serves with the api role, authenticates
// one request, makes the database unreachable and stops: the last-use flush
// runs once more after HTTP drained (it fails here, which its error line
// shows), so the uses of requests that finished during the drain are
// written, not lost.
func TestServeFlushesTokenUseAfterDrain(t *testing.T) {
	t.Parallel()
	logs := &e2etest.LogBuffer{}
	env := wiretest.New(t, wiretest.WithLogCopy(logs))
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	base, stop, done := e2etest.Serving(t, env.App)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+owner.Token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/me: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/me = %d, want 200", resp.StatusCode)
	}

	env.App.Pool().Close()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	case <-time.After(e2etest.WaitTimeout):
		t.Fatal("Serve did not return")
	}
	log := logs.String()
	drained := strings.Index(log, `"msg":"http drained"`)
	flushed := strings.Index(log, `"msg":"flush token last use"`)
	if drained < 0 || flushed < drained {
		t.Fatalf("want the last-use flush after the drain (drained at %d, flush at %d). Log:\n%s", drained, flushed, log)
	}
}
