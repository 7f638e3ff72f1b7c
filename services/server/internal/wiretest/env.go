package wiretest

import (
	"bytes"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

// Epoch is the fake clock's start: a fixed instant, so tests that print or
// compare times are reproducible.
var Epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// Env is one App under test: wired exactly like production except for what
// is external (its own pgtest database, a fake clock, the test's
// configuration), served by an httptest server on 127.0.0.1.
type Env struct {
	// App is the wired process.
	App *wire.App
	// Server serves App.Handler() on 127.0.0.1 and a free port.
	Server *httptest.Server
	// Client talks to Server and validates every response.
	Client *Client
	// Config is the configuration the App was built from; its Reads show
	// which keys wiring read.
	Config *config.Config
	// Clock is the fake time source of every module.
	Clock *clock.Fake
	// DatabaseURL is the App's database (a fresh clone of the migrated
	// template unless WithDatabaseURL chose another).
	DatabaseURL string
}

type settings struct {
	values map[string]string
	dbURL  string
	mount  func(chi.Router)
	logs   io.Writer
}

// Option changes what New builds.
type Option func(*settings)

// WithSetting sets a configuration key, as its BOTHY_ environment variable
// would.
func WithSetting(k config.Key, value string) Option {
	return func(s *settings) { s.values[k.EnvName()] = value }
}

// WithDatabaseURL uses url instead of a fresh pgtest database (a database
// that is down, or one a test prepared).
func WithDatabaseURL(url string) Option {
	return func(s *settings) { s.dbURL = url }
}

// WithMount adds test-only routes after the API's (see wire.Options.Mount).
func WithMount(fn func(chi.Router)) Option {
	return func(s *settings) { s.mount = fn }
}

// WithLogCopy also writes every log line of the App to w (besides t.Log),
// for tests that search the logs, such as the check that no token secret is
// ever logged. w must be safe for concurrent use.
func WithLogCopy(w io.Writer) Option {
	return func(s *settings) { s.logs = w }
}

// New builds an Env and registers its teardown (server closed, App closed,
// database dropped) with t.Cleanup. On its own pgtest database (no
// WithDatabaseURL) the App is built with wire.Options.Migrate, so the
// instance exists as after bothy migrate. The App's logs go to t.Log, so they show
// up when the test fails. The package's TestMain must run pgtest.Main.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	s := &settings{values: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	// A database of its own is made ready the way bothy migrate leaves one
	// (the instance row, the event log's partitions), so that every module
	// can serve; a database the test chose is used as it is.
	setUp := s.dbURL == ""
	if setUp {
		s.dbURL = pgtest.URL(t)
	}
	s.values[config.DatabaseURL.EnvName()] = s.dbURL
	environ := make([]string, 0, len(s.values))
	for k, v := range s.values {
		environ = append(environ, k+"="+v)
	}
	cfg, err := config.Load("", environ)
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	var logs io.Writer = newTestWriter(t)
	if s.logs != nil {
		logs = io.MultiWriter(logs, s.logs)
	}
	logger := logging.New(logs, slog.LevelDebug)
	fake := clock.NewFake(Epoch)
	app, err := wire.New(t.Context(), cfg, logger, wire.Options{Clock: fake, Mount: s.mount, Migrate: setUp})
	if err != nil {
		t.Fatalf("wire.New: %v", err)
	}
	srv := httptest.NewServer(app.Handler())
	// Cleanups run last-in first-out: the server stops before the pool closes.
	t.Cleanup(app.Close)
	t.Cleanup(srv.Close)
	return &Env{
		App:         app,
		Server:      srv,
		Client:      NewClient(t, srv.URL),
		Config:      cfg,
		Clock:       fake,
		DatabaseURL: s.dbURL,
	}
}

// TestLogger returns a JSON logger (as in production, with request ids)
// whose lines go to t.Log until the test ends; later lines are dropped,
// because t.Log panics after the test is done.
func TestLogger(t testing.TB) *slog.Logger {
	return logging.New(newTestWriter(t), slog.LevelDebug)
}

// newTestWriter returns a writer whose lines go to t.Log until the test
// ends.
func newTestWriter(t testing.TB) *testWriter {
	w := &testWriter{t: t}
	t.Cleanup(w.stop)
	return w
}

type testWriter struct {
	mu      sync.Mutex
	t       testing.TB
	stopped bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}
