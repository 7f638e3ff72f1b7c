// Package pgtest gives every test its own PostgreSQL database, so that integration tests run
// on the real server, in parallel and isolated, and never skip for want of a database.
//
// One throwaway server per test binary starts on first use: in a container when a Docker
// engine answers, otherwise from the machine's binaries (pglocal) in a temporary directory.
// The migration sets given to Main are applied once to a template database (also when there
// are none, which creates the bookkeeping table, so the template counts as current), and each test
// gets a clone of it (CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY), dropped when the
// test ends. Its connections use search_path pg_catalog, so an unqualified table name fails
// as it would for a module that forgot its schema.
//
// Main stops the server and removes the directory after the run, also on SIGINT and SIGTERM.
// A guardian process does the same when the test binary dies any other way (a panicking test,
// a test timeout, kill -9), since no deferred function runs then.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/pglocal"
)

const (
	// TemplateDatabase is the migrated database every test database is cloned from.
	TemplateDatabase = "bothy_template"
	// superuser is the role tests connect as.
	superuser = "bothy"
	// poolMaxConns keeps each test's pool small, since many tests run at once on one server.
	poolMaxConns = 4
	// adminMaxConns bounds the connections that create and drop test databases.
	adminMaxConns = 4
	// maxConnections is the server's max_connections: room for every parallel test's pool.
	maxConnections = "300"
	// startTimeout bounds starting the server and migrating the template.
	startTimeout = 2 * time.Minute
	// opTimeout bounds creating or dropping one test database and stopping the server.
	opTimeout = time.Minute
	// sessionEndWait bounds the wait for a closed pool's sessions to end before a drop.
	sessionEndWait = time.Second
	// shmDir is the memory file system preferred for the server's files.
	shmDir = "/dev/shm"
	// tempPattern names the server's temporary directory.
	tempPattern = "bothy-pgtest-"
	// searchPath is what every test connection searches: nothing of bothy's.
	searchPath = "pg_catalog"
)

// server is a running throwaway PostgreSQL, local or in a container.
type server interface {
	url(database string) string
	stop(ctx context.Context) error
}

// state is the one server of this test binary.
var state struct {
	mu      sync.Mutex
	inMain  bool
	sets    []migrate.Set
	started bool  // a start was attempted during this Main
	err     error // the start's error, reported to every test
	srv     server
	admin   *pgxpool.Pool
	dir     string // temporary directory of a local server
	guard   *guardian

	// What the last start created, for Leftovers.
	leftDir  string
	leftPIDs []int
}

var dbSeq atomic.Int64

// Main runs the tests of m with the migration sets applied to every test database, and
// returns the exit code for os.Exit. The server starts when the first test asks for a
// database, so a package whose tests need none pays nothing. Afterwards (also on SIGINT or
// SIGTERM) it stops the server and removes its directory; a cleanup failure turns a passing
// run into a failing one.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, wire.Migrations()...)) }
func Main(m *testing.M, sets ...migrate.Set) (code int) {
	state.mu.Lock()
	state.inMain, state.sets, state.started, state.err = true, sets, false, nil
	state.mu.Unlock()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case s := <-sigs:
			if err := shutdown(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			fmt.Fprintf(os.Stderr, "pgtest: %v: stopped the test database server\n", s)
			sig, _ := s.(syscall.Signal)
			os.Exit(128 + int(sig))
		case <-quit:
		}
	})
	defer func() {
		signal.Stop(sigs)
		close(quit)
		wg.Wait()
	}()
	defer func() {
		if err := shutdown(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}

// New returns a pool on a fresh database cloned from the migrated template. The pool is
// closed and the database dropped when the test ends.
func New(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(URL(tb))
	if err != nil {
		tb.Fatalf("pgtest: parse url: %v", err)
	}
	cfg.MaxConns = poolMaxConns
	pool, err := pgxpool.NewWithConfig(tb.Context(), cfg)
	if err != nil {
		tb.Fatalf("pgtest: pool: %v", err)
	}
	// Registered after URL's cleanup, so it runs first: the pool closes before the drop.
	tb.Cleanup(pool.Close)
	return pool
}

// URL creates a fresh database like New and returns its connection URL, for tests that build
// their own pool or start a process. The URL carries search_path pg_catalog.
func URL(tb testing.TB) string {
	tb.Helper()
	srv, admin, err := ensure()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	name := fmt.Sprintf("t_%d", dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	create := "CREATE DATABASE " + name + " TEMPLATE " + TemplateDatabase + " STRATEGY FILE_COPY"
	if _, err := admin.Exec(ctx, create); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := drop(admin, name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	u, err := withSearchPath(srv.url(name))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return u
}

// drop removes a test database. Its pool has just been closed, but the server side of those
// connections takes a moment to end, and DROP DATABASE meets a session still there with a
// 100 ms sleep; waiting for the sessions first keeps a test's cleanup near a millisecond.
func drop(admin *pgxpool.Pool, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(sessionEndWait); time.Now().Before(deadline); {
		var sessions int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = $1", name).Scan(&sessions); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		if sessions == 0 {
			break
		}
		<-tick.C
	}
	// FORCE ends sessions a test left open on purpose (its own pool, a child process).
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Leftovers reports what the server of the last Main left behind: a process still running
// (server or guardian), a process still working in its directory, or the directory itself.
// TestMain calls it after Main returns to prove the cleanup; nil when nothing was started.
func Leftovers() error {
	state.mu.Lock()
	dir, pids := state.leftDir, state.leftPIDs
	state.mu.Unlock()
	return leftovers(pids, dir)
}

func leftovers(pids []int, dir string) error {
	var errs []error
	for _, pid := range pids {
		if pglocal.Alive(pid) {
			errs = append(errs, fmt.Errorf("pgtest: process %d still running", pid))
		}
	}
	if dir == "" {
		return errors.Join(errs...)
	}
	if _, err := os.Lstat(dir); err == nil {
		errs = append(errs, fmt.Errorf("pgtest: directory %s still exists", dir))
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("pgtest: check directory: %w", err))
	}
	procs, err := pglocal.Processes(dir)
	if err != nil {
		errs = append(errs, fmt.Errorf("pgtest: %w", err))
	}
	if len(procs) > 0 {
		errs = append(errs, fmt.Errorf("pgtest: processes %v still work in %s", procs, dir))
	}
	return errors.Join(errs...)
}

// ensure starts the server on first use and returns it with the pool that creates databases.
func ensure() (server, *pgxpool.Pool, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.inMain {
		return nil, nil, errors.New("no server: TestMain must call os.Exit(pgtest.Main(m, sets...))")
	}
	if !state.started {
		state.started = true
		state.err = start()
	}
	return state.srv, state.admin, state.err
}

// start brings up the server and the template; on error, shutdown cleans up what it made.
func start() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	state.leftDir, state.leftPIDs = "", nil
	if dockerAvailable(ctx) {
		srv, err := startContainer(ctx)
		if err != nil {
			return err
		}
		state.srv = srv
	} else if err := startLocal(ctx); err != nil {
		return explainLocal(err)
	}
	// Migrate the template also without sets: Apply creates the bookkeeping table, and a
	// database without it counts as not migrated (migrate.Pending), so /readyz would be 503.
	u, err := withSearchPath(state.srv.url(TemplateDatabase))
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return fmt.Errorf("template pool: %w", err)
	}
	_, err = migrate.Apply(ctx, pool, state.sets)
	// The template must have no connection left when it is cloned.
	pool.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(state.srv.url("postgres"))
	if err != nil {
		return fmt.Errorf("admin pool: %w", err)
	}
	cfg.MaxConns = adminMaxConns
	admin, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("admin pool: %w", err)
	}
	state.admin = admin
	// Nobody may connect to the template by mistake and block every clone.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{TemplateDatabase}.Sanitize()+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("lock template: %w", err)
	}
	return nil
}

// explainLocal says, when the local binaries are missing, that Docker was tried first; the
// wrapped pglocal error tells how to install PostgreSQL.
func explainLocal(err error) error {
	if errors.Is(err, pglocal.ErrNotInstalled) {
		return fmt.Errorf("no Docker engine answered and %w", err)
	}
	return err
}

// withSearchPath adds the startup option that sets search_path for every connection of rawURL;
// libpq-style clients understand it as well as pgx.
func withSearchPath(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("parse url: %w", err)
	}
	q := u.Query()
	q.Set("options", "-c search_path="+searchPath)
	// pgx does not decode "+" as a space in query values, so spaces are written as %20.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), nil
}

// startLocal runs the server from the machine's binaries in a fresh temporary directory
// watched by a guardian.
func startLocal(ctx context.Context) error {
	dir, err := makeTempDir()
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	state.dir, state.leftDir = dir, dir
	// The server account (postgres when root) must be able to enter it.
	if err := os.Chmod(dir, 0o711); err != nil { //nolint:gosec // G302: search only, no listing.
		return fmt.Errorf("temp dir: %w", err)
	}
	g, err := startGuardian(dir)
	if err != nil {
		return err
	}
	state.guard = g
	state.leftPIDs = append(state.leftPIDs, g.pid())
	c, err := pglocal.Start(ctx, pglocal.Options{
		Dir:       filepath.Join(dir, "data"),
		Trust:     true,
		Superuser: superuser,
		Database:  TemplateDatabase,
		Settings:  map[string]string{"max_connections": maxConnections},
	})
	if err != nil {
		return err
	}
	state.srv = localServer{c}
	state.leftPIDs = append(state.leftPIDs, c.PID())
	return nil
}

// makeTempDir creates the server's temporary directory: under TMPDIR when set, else in the
// memory file system /dev/shm when usable, else in the system default. Creating a test
// database copies a few hundred files; on a disk that took about 250 ms per database, in
// memory about 7 ms.
func makeTempDir() (string, error) {
	if os.Getenv("TMPDIR") == "" {
		if dir, err := os.MkdirTemp(shmDir, tempPattern); err == nil {
			return dir, nil
		}
	}
	return os.MkdirTemp("", tempPattern)
}

type localServer struct{ c *pglocal.Cluster }

func (s localServer) url(database string) string     { return s.c.URL(database) }
func (s localServer) stop(ctx context.Context) error { return s.c.Stop(ctx) }

// shutdown stops the server and removes everything start made; it is idempotent.
func shutdown() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	var errs []error
	if state.admin != nil {
		state.admin.Close()
		state.admin = nil
	}
	if state.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		if err := state.srv.stop(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
		state.srv = nil
	}
	if state.dir != "" {
		if err := os.RemoveAll(state.dir); err != nil {
			errs = append(errs, fmt.Errorf("remove temp dir: %w", err))
		}
		state.dir = ""
	}
	if state.guard != nil {
		if err := state.guard.release(); err != nil {
			errs = append(errs, err)
		}
		state.guard = nil
	}
	state.inMain = false
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pgtest: cleanup: %w", err)
	}
	return nil
}
