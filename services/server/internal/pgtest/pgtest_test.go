package pgtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pglocal"
	"bothy.example.com/server/internal/pgtest"
)

// fixture is the migration set every test database is cloned with.
var fixture = migrate.Set{Schema: "fixture", FS: fstest.MapFS{
	"0001_items.sql": {Data: []byte(`CREATE SCHEMA fixture;
CREATE TABLE fixture.items (id bigserial PRIMARY KEY, owner text NOT NULL);`)},
}}

// childEnv switches the test binary into the role of a crashing or interrupted test run,
// started by TestCrashOrInterruptLeavesNothing.
const childEnv = "BOTHY_PGTEST_CHILD"

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER: the server and guardian of a crashed
// child run are reparented to this process, which reaps them, instead of becoming zombies on
// machines whose init never reaps.
const prSetChildSubreaper = 36

func TestMain(m *testing.M) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "pgtest test: prctl subreaper:", errno)
		os.Exit(1)
	}
	code := pgtest.Main(m, fixture)
	// The check after the run: Main must have stopped the server and removed its directory.
	if err := pgtest.Leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest test: left behind:", err)
		code = 1
	}
	os.Exit(leaktest.Check(code))
}

func TestParallelTestsGetIsolatedDatabases(t *testing.T) {
	t.Parallel()
	const tests = 30
	for i := range tests {
		name := fmt.Sprintf("db_%02d", i)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.New(t)
			rows := i%5 + 1
			for range rows {
				if _, err := pool.Exec(t.Context(), "INSERT INTO fixture.items (owner) VALUES ($1)", name); err != nil {
					t.Fatalf("insert: %v", err)
				}
			}
			owners, err := pool.Query(t.Context(), "SELECT owner, count(*) FROM fixture.items GROUP BY owner")
			if err != nil {
				t.Fatalf("select: %v", err)
			}
			var seen []string
			var n int
			var owner string
			if _, err := pgx.ForEachRow(owners, []any{&owner, &n}, func() error {
				seen = append(seen, fmt.Sprintf("%s=%d", owner, n))
				return nil
			}); err != nil {
				t.Fatalf("scan: %v", err)
			}
			if want := fmt.Sprintf("%s=%d", name, rows); len(seen) != 1 || seen[0] != want {
				t.Errorf("rows by owner = %v, want only %s", seen, want)
			}
		})
	}
}

func TestUnqualifiedNamesFail(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	_, err := pool.Exec(t.Context(), "SELECT count(*) FROM items")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Errorf("unqualified table: err = %v, want undefined_table", err)
	}
	var path string
	if err := pool.QueryRow(t.Context(), "SHOW search_path").Scan(&path); err != nil || path != "pg_catalog" {
		t.Errorf("search_path = %q, %v; want pg_catalog", path, err)
	}
}

func TestTemplateIsMigrated(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	var schema, name string
	err := pool.QueryRow(t.Context(), "SELECT schema_name, name FROM bothy_meta.schema_migrations").Scan(&schema, &name)
	if err != nil || schema != "fixture" || name != "0001_items.sql" {
		t.Errorf("bookkeeping = %q %q, %v; want fixture 0001_items.sql", schema, name, err)
	}
	pending, err := migrate.Pending(t.Context(), pool, []migrate.Set{fixture})
	if err != nil || pending != 0 {
		t.Errorf("pending = %d, %v; want 0", pending, err)
	}
}

func TestURLServesOwnConnections(t *testing.T) {
	t.Parallel()
	rawURL := pgtest.URL(t)
	conn, err := pgx.Connect(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var db, path string
	if err := conn.QueryRow(t.Context(), "SELECT current_database(), current_setting('search_path')").Scan(&db, &path); err != nil {
		t.Fatalf("query: %v", err)
	}
	if !strings.HasPrefix(db, "t_") || path != "pg_catalog" {
		t.Errorf("database %q, search_path %q; want a t_ database with pg_catalog", db, path)
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM fixture.items").Scan(&n); err != nil || n != 0 {
		t.Errorf("items = %d, %v; want an empty migrated table", n, err)
	}
}

func TestDatabaseDroppedAtCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("user", func(t *testing.T) {
		pool := pgtest.New(t)
		if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatalf("query: %v", err)
		}
	})
	probe := pgtest.New(t)
	var exists bool
	if err := probe.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatalf("query: %v", err)
	}
	if exists {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

// TestCrashOrInterruptLeavesNothing runs this test binary again as a child that starts the
// server and then panics or receives SIGINT, and checks that the server process, the guardian
// and the temporary directory all disappear.
func TestCrashOrInterruptLeavesNothing(t *testing.T) {
	if mode := os.Getenv(childEnv); mode != "" {
		childRun(t, mode)
		return
	}
	t.Parallel()
	tests := []struct {
		name     string
		mode     string
		wantCode int
	}{
		{name: "panic", mode: "panic", wantCode: 2},
		{name: "sigint", mode: "sigint", wantCode: 128 + int(syscall.SIGINT)},
		{name: "sigterm", mode: "sigterm", wantCode: 128 + int(syscall.SIGTERM)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			//nolint:gosec // G204: this very test binary, run again as the child.
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrashOrInterruptLeavesNothing$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+tc.mode)
			cmd.Stderr = io.Discard
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatalf("stdin: %v", err)
			}
			defer func() { _ = stdin.Close() }()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatalf("stdout: %v", err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatalf("start child: %v", err)
			}
			info := readInfo(t, stdout)
			switch tc.mode {
			case "sigint":
				_ = cmd.Process.Signal(syscall.SIGINT)
			case "sigterm":
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			_, _ = io.Copy(io.Discard, stdout)
			err = cmd.Wait()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != tc.wantCode {
				t.Errorf("child exit = %v, want code %d", err, tc.wantCode)
			}
			waitGone(t, info)
		})
	}
}

type childInfo struct {
	dir        string
	pid, guard int
}

// childRun is the child's side: start the server, report it, then crash or wait for a signal.
func childRun(t *testing.T, mode string) {
	pgtest.New(t)
	dir, pid, guard := pgtest.ServerInfo()
	fmt.Printf("PGTEST_INFO %s %d %d\n", dir, pid, guard)
	if mode == "panic" {
		panic("crashing on purpose with a running server")
	}
	_, _ = io.ReadAll(os.Stdin) // the signal handler exits the process
	t.Fatal("stdin closed before the signal came")
}

func readInfo(t *testing.T, r io.Reader) childInfo {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "PGTEST_INFO" {
			pid, perr := strconv.Atoi(f[2])
			guard, gerr := strconv.Atoi(f[3])
			if err := errors.Join(perr, gerr); err != nil {
				t.Fatalf("parse %q: %v", sc.Text(), err)
			}
			return childInfo{dir: f[1], pid: pid, guard: guard}
		}
	}
	t.Fatalf("child ended without reporting its server: %v", sc.Err())
	return childInfo{}
}

// waitGone waits until the child's server and guardian have exited (reaping them, since they
// were reparented to this process) and its directory is gone.
func waitGone(t *testing.T, info childInfo) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, pid := range []int{info.pid, info.guard} {
			reapIfZombie(pid)
		}
		_, statErr := os.Stat(info.dir)
		procs, err := pglocal.Processes(info.dir)
		if err != nil {
			t.Fatalf("processes: %v", err)
		}
		gone := !pglocal.Alive(info.pid) && !pglocal.Alive(info.guard) && errors.Is(statErr, os.ErrNotExist) && len(procs) == 0
		if gone && !exists(info.pid) && !exists(info.guard) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the child ended: server alive %v, guardian alive %v, dir err %v, processes %v",
				pglocal.Alive(info.pid), pglocal.Alive(info.guard), statErr, procs)
		}
		<-tick.C
	}
}

func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// reapIfZombie collects an exited process that was reparented to this subreaper.
func reapIfZombie(pid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}
