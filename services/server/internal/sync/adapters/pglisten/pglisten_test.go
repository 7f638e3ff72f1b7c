package pglisten_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/sync/adapters/pglisten"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m)) }

const within = 30 * time.Second

// withCheck is the keys' defaults with the check interval check (0 keeps the default one).
func withCheck(t *testing.T, check time.Duration) pglisten.Config {
	t.Helper()
	r := config.NewRegister()
	for _, k := range []config.Key{pglisten.KeyCheckInterval, pglisten.KeyCloseTimeout} {
		r.Define(k.Name, k.Kind, k.Default, k.Meaning)
	}
	loaded, err := r.Load("", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cfg := pglisten.ConfigFrom(loaded)
	if err := loaded.Err(); err != nil {
		t.Fatalf("config: %v", err)
	}
	if check != 0 {
		cfg.CheckInterval = check
	}
	return cfg
}

// TestNewRefusesABadConfig: a check interval or close timeout that is not positive is refused,
// naming the key.
func TestNewRefusesABadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		change func(*pglisten.Config)
		want   string
	}{
		{func(c *pglisten.Config) { c.CheckInterval = 0 }, "sync.listen_check_interval"},
		{func(c *pglisten.Config) { c.CloseTimeout = 0 }, "sync.listen_close_timeout"},
	} {
		cfg := withCheck(t, 0)
		tc.change(&cfg)
		if _, err := pglisten.New(nil, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New = %v, want an error naming %s", err, tc.want)
		}
	}
}

// listening runs Listen on a fresh database and returns the database URL, the heads it was
// notified of, and a stop function returning Listen's result.
func listening(t *testing.T, check time.Duration) (url string, heads <-chan int64, stop func() error, ended <-chan error) {
	t.Helper()
	url = pgtest.URL(t)
	l, err := pglisten.New(func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }, withCheck(t, check))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ready := make(chan struct{})
	got := make(chan int64, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Listen(ctx, func() { close(ready) }, func(h int64) { got <- h })
	}()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(within):
			t.Fatal("Listen did not return")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Listen = %v before it was ready", err)
	case <-time.After(within):
		t.Fatal("Listen was not ready")
	}
	return url, got, stop, done
}

func exec(t *testing.T, url string, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func TestListenDeliversTheHeadOfEveryNotification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check time.Duration
	}{
		{name: "default check interval", check: 0},
		// Checks the connection many times between notifications: a quiet timeout must
		// leave the connection usable.
		{name: "frequent checks", check: 5 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, heads, stop, _ := listening(t, tc.check)
			exec(t, url, "SELECT pg_notify('bothy_event_log', '42')")
			exec(t, url, "SELECT pg_notify('elsewhere', '7')")
			exec(t, url, "SELECT pg_notify('bothy_event_log', 'not a seq')")
			exec(t, url, "SELECT pg_notify('bothy_event_log', '43')")
			var got []int64
			for len(got) < 3 {
				select {
				case h := <-heads:
					got = append(got, h)
				case <-time.After(within):
					t.Fatalf("got %v, want 3 notifications", got)
				}
			}
			if want := []int64{42, -1, 43}; !slices.Equal(got, want) {
				t.Fatalf("heads = %v, want %v", got, want)
			}
			if err := stop(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Listen after cancel = %v, want context.Canceled", err)
			}
		})
	}
}

func TestListenReturnsWhenTheConnectionIsLost(t *testing.T) {
	t.Parallel()
	url, _, _, ended := listening(t, 0)
	exec(t, url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%LISTEN%' AND pid <> pg_backend_pid()")
	var err error
	select {
	case err = <-ended:
	case <-time.After(within):
		t.Fatal("Listen went on after its backend was terminated")
	}
	if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Listen after the backend was terminated = %v, want a connection error", err)
	}
}

func TestListenReportsAFailedConnect(t *testing.T) {
	t.Parallel()
	refused := errors.New("connection refused")
	l, err := pglisten.New(func(context.Context) (*pgx.Conn, error) { return nil, refused }, withCheck(t, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = l.Listen(t.Context(), func() { t.Error("ready without a connection") }, func(int64) {})
	if !errors.Is(err, refused) {
		t.Fatalf("Listen = %v, want the connect error", err)
	}
}

// TestChannelIsTheAppendersChannel keeps the listener on the channel the appender notifies.
func TestChannelIsTheAppendersChannel(t *testing.T) {
	t.Parallel()
	if pglisten.Channel != syncpg.NotifyChannel {
		t.Fatalf("pglisten listens on %q, the appender notifies %q", pglisten.Channel, syncpg.NotifyChannel)
	}
}
