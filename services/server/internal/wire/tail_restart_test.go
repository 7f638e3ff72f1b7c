package wire_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/pglocal"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// restartWithin bounds the wait for events after the restart: the listener's reconnect
// backoff is at most syncapp.DefaultRetryCap, plus a loaded machine's slack.
const restartWithin = 60 * time.Second

// TestTailAcrossAPostgresRestart follows the log of a dedicated cluster, stops the cluster,
// starts it again on the same port and appends more events: the subscriber sees every event
// exactly once, in order, and its subscription survives. The poll interval is an hour, so
// the events after the restart arrive only because the tail's listener reconnected (and read
// what it may have missed) and its reads recovered from the pool's dead connections.
func TestTailAcrossAPostgresRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, err := os.MkdirTemp("", "bothy-tail-")
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
	cfg := e2etest.LoadConfig(t, map[config.Key]string{
		config.DatabaseURL:          url,
		syncapp.KeyTailPollInterval: "1h",
	})
	if _, err := wire.Migrate(ctx, cfg, url, wiretest.TestLogger(t)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	newApp := func() *wire.App {
		t.Helper()
		app, err := wire.New(ctx, cfg, wiretest.TestLogger(t), wire.Options{})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(app.Close)
		return app
	}

	// One process tails, another writes, as on two machines.
	tailing := newApp()
	tail := tailing.Tail()
	sub := tail.Subscribe(1000)
	e2etest.RunTail(t, tail)
	start, _ := tail.Last()

	writer := newApp()
	var want []uuid.UUID
	appendSome := func(app *wire.App, sizes ...int) {
		t.Helper()
		for _, n := range sizes {
			got, err := appendEvents(ctx, app, n)
			if err != nil {
				t.Fatalf("append %d: %v", n, err)
			}
			want = append(want, got...)
		}
	}
	appendSome(writer, 1, 4, 2)
	got := receive(t, sub, start, len(want), e2etest.WaitTimeout)

	if err := cluster.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	opts.Port = cluster.Port()
	cluster, err = pglocal.Start(ctx, opts)
	if err != nil {
		t.Fatalf("restart on port %d: %v", opts.Port, err)
	}
	if cluster.URL(pglocal.DefaultDatabase) != url {
		t.Fatalf("the restarted cluster has URL %s, want %s", cluster.URL(pglocal.DefaultDatabase), url)
	}

	// A new writer (the old one's connections died with the server).
	writer = newApp()
	appendSome(writer, 3, 1, 5)
	got = append(got, receive(t, sub, start+int64(len(got)), len(want)-len(got), restartWithin)...)
	if !slices.Equal(got, want) {
		t.Fatalf("subscriber got %v, want %v", got, want)
	}
	// Later notifications reach the reconnected listener too.
	appendSome(writer, 2)
	got = append(got, receive(t, sub, start+int64(len(got)), 2, restartWithin)...)
	if !slices.Equal(got, want) {
		t.Fatalf("subscriber got %v, want %v", got, want)
	}
	if err := sub.Err(); err != nil {
		t.Fatalf("subscription ended: %v", err)
	}
}
