package pglocal_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pglocal"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER: the kill test orphans the backends of
// the killed postmaster, and on machines whose init never reaps they would linger as zombies.
const prSetChildSubreaper = 36

func TestMain(m *testing.M) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "pglocal test: prctl subreaper:", errno)
		os.Exit(1)
	}
	code := m.Run()
	os.Exit(leaktest.Check(code))
}

// dataDir returns a data directory path inside a fresh temporary directory that the server
// account may traverse (t.TempDir makes 0700 directories, which the postgres user cannot enter).
func dataDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil { //nolint:gosec // G302: search only, for the server account.
			t.Fatalf("chmod %s: %v", d, err)
		}
	}
	return filepath.Join(base, "data")
}

// start starts a cluster and registers its Stop; cleanups run last-in first-out, so the
// cluster stops before t.TempDir removes its directory.
func start(t *testing.T, o pglocal.Options) *pglocal.Cluster {
	t.Helper()
	c, err := pglocal.Start(t.Context(), o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c
}

func connect(t *testing.T, rawURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("connect %s: %v", rawURL, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// procState returns the state letter of /proc/<pid>/stat ("" when the process is gone) and
// its parent pid.
func procState(pid int) (state string, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0], ppid
}

// children lists the processes whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid := procState(p); ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

func assertGone(t *testing.T, c *pglocal.Cluster) {
	t.Helper()
	if pglocal.Alive(c.PID()) {
		t.Errorf("postmaster %d still running after Stop", c.PID())
	}
	procs, err := pglocal.Processes(c.Dir())
	if err != nil {
		t.Fatalf("processes: %v", err)
	}
	if len(procs) > 0 {
		t.Errorf("processes %v still work in %s after Stop", procs, c.Dir())
	}
}

func TestStartConnectRestartStop(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	o := pglocal.Options{Dir: dir, Trust: true}

	c := start(t, o)
	conn := connect(t, c.URL(pglocal.DefaultDatabase))
	if _, err := conn.Exec(t.Context(), "CREATE TABLE public.notes (body text); INSERT INTO public.notes VALUES ('hello Alex')"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	var user, db string
	if err := conn.QueryRow(t.Context(), "SELECT current_user, current_database()").Scan(&user, &db); err != nil {
		t.Fatalf("query: %v", err)
	}
	if user != pglocal.DefaultSuperuser || db != pglocal.DefaultDatabase {
		t.Errorf("user, database = %q, %q; want %q, %q", user, db, pglocal.DefaultSuperuser, pglocal.DefaultDatabase)
	}
	_ = conn.Close(t.Context())
	if err := c.Stop(t.Context()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertGone(t, c)
	if err := c.Stop(t.Context()); err != nil {
		t.Errorf("second stop: %v", err)
	}

	version, err := os.ReadFile(filepath.Join(dir, "PG_VERSION")) //nolint:gosec // G304: the test's own directory.
	if err != nil {
		t.Fatalf("read PG_VERSION: %v", err)
	}
	c2 := start(t, o)
	conn2 := connect(t, c2.URL(pglocal.DefaultDatabase))
	var body string
	if err := conn2.QueryRow(t.Context(), "SELECT body FROM public.notes").Scan(&body); err != nil {
		t.Fatalf("data not kept across restart: %v", err)
	}
	if body != "hello Alex" {
		t.Errorf("body = %q", body)
	}
	again, err := os.ReadFile(filepath.Join(dir, "PG_VERSION")) //nolint:gosec // G304: the test's own directory.
	if err != nil || string(again) != string(version) {
		t.Errorf("PG_VERSION changed across restart: %q, %v", again, err)
	}
	_ = conn2.Close(t.Context())
	if err := c2.Stop(t.Context()); err != nil {
		t.Fatalf("stop after restart: %v", err)
	}
	assertGone(t, c2)
}

func TestPasswordAuthentication(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	c := start(t, pglocal.Options{Dir: dir, Database: "chat_example"})

	pwFile := filepath.Join(filepath.Dir(dir), "password")
	fi, err := os.Stat(pwFile)
	if err != nil {
		t.Fatalf("password file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("password file mode = %o, want 600", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "postgres.log")); err != nil {
		t.Errorf("log file: %v", err)
	}
	pw, err := os.ReadFile(pwFile) //nolint:gosec // G304: the test's own directory.
	if err != nil {
		t.Fatalf("read password: %v", err)
	}
	u, err := url.Parse(c.URL("chat_example"))
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	if got, _ := u.User.Password(); got != strings.TrimSpace(string(pw)) {
		t.Errorf("url password differs from the password file")
	}
	if host := u.Hostname(); host != "127.0.0.1" {
		t.Errorf("host = %q, want 127.0.0.1", host)
	}

	conn := connect(t, c.URL("chat_example"))
	var owner string
	err = conn.QueryRow(t.Context(),
		"SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_catalog.pg_database WHERE datname = current_database()").Scan(&owner)
	if err != nil {
		t.Fatalf("owner query: %v", err)
	}
	if owner != pglocal.DefaultSuperuser {
		t.Errorf("database owner = %q, want %q", owner, pglocal.DefaultSuperuser)
	}

	tests := []struct {
		name     string
		password string
	}{
		{name: "wrong password", password: "not-the-password"},
		{name: "no password", password: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := *u
			if tc.password == "" {
				bad.User = url.User(pglocal.DefaultSuperuser)
			} else {
				bad.User = url.UserPassword(pglocal.DefaultSuperuser, tc.password)
			}
			conn, err := pgx.Connect(t.Context(), bad.String())
			if err == nil {
				_ = conn.Close(context.Background())
				t.Fatal("connected without the right password")
			}
		})
	}
}

func TestStartRecoversAfterKilledPostmaster(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	// Fsync: with synchronous_commit off a killed server may lose its last commits.
	o := pglocal.Options{Dir: dir, Trust: true, Fsync: true}
	c := start(t, o)
	conn := connect(t, c.URL(pglocal.DefaultDatabase))
	if _, err := conn.Exec(t.Context(), "CREATE TABLE public.kept (id int); INSERT INTO public.kept VALUES (7)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	_ = conn.Close(t.Context())

	postmaster := c.PID()
	orphans := children(t, postmaster)
	if len(orphans) == 0 {
		t.Fatal("postmaster has no child processes")
	}
	if err := syscall.Kill(postmaster, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 postmaster: %v", err)
	}
	waitFor(t, 10*time.Second, "the killed postmaster to vanish", func() bool { return !pglocal.Alive(postmaster) })
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err != nil {
		t.Fatalf("a killed postmaster leaves its pid file behind, got %v", err)
	}

	// Its owner (this process, through c) still runs: Start refuses at once instead of waiting.
	if c2, err := pglocal.Start(t.Context(), o); err == nil {
		_ = c2.Stop(context.Background())
		t.Fatal("Start succeeded while the owner of the killed postmaster still held its lock")
	} else if !strings.Contains(err.Error(), "is gone") {
		t.Errorf("err = %v, want it to say the owner's server is gone", err)
	}
	// The whole run is killed: its owner lock goes too.
	pglocal.ReleaseOwnership(c)

	c2 := start(t, o)
	conn2 := connect(t, c2.URL(pglocal.DefaultDatabase))
	var id int
	if err := conn2.QueryRow(t.Context(), "SELECT id FROM public.kept").Scan(&id); err != nil || id != 7 {
		t.Fatalf("data after recovery: id %d, err %v", id, err)
	}
	_ = conn2.Close(t.Context())
	if err := c2.Stop(t.Context()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertGone(t, c2)

	// The old backends were reparented to this process (a subreaper): reap them so that no
	// zombie is left behind.
	self := os.Getpid()
	for _, pid := range orphans {
		waitFor(t, 10*time.Second, fmt.Sprintf("orphaned backend %d to exit", pid), func() bool {
			state, ppid := procState(pid)
			return state == "" || (state == "Z" && ppid == self)
		})
		if state, _ := procState(pid); state == "Z" {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				t.Errorf("reap %d: %v", pid, err)
			}
		}
	}
}

func TestStartStopsServerLeftRunning(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	o := pglocal.Options{Dir: dir, Trust: true}
	first := start(t, o)
	// The owner dies without stopping its server: the kernel drops its lock.
	pglocal.ReleaseOwnership(first)

	second := start(t, o)
	if pglocal.Alive(first.PID()) {
		t.Errorf("left-behind postmaster %d still running after a second Start on the same directory", first.PID())
	}
	if second.PID() == first.PID() {
		t.Errorf("second Start attached to the left-behind postmaster %d instead of starting its own", first.PID())
	}
	conn := connect(t, second.URL(pglocal.DefaultDatabase))
	if err := conn.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestSecondStartAttachesToRunningCluster(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	o := pglocal.Options{Dir: dir} // password authentication, as the embedded default
	first := start(t, o)
	conn := connect(t, first.URL(pglocal.DefaultDatabase))
	if _, err := conn.Exec(t.Context(), "CREATE TABLE public.shared (body text); INSERT INTO public.shared VALUES ('from Robin')"); err != nil {
		t.Fatalf("create table: %v", err)
	}

	second, err := pglocal.Start(t.Context(), o)
	if err != nil {
		t.Fatalf("second start: %v", err)
	}
	if second.Port() != first.Port() || second.PID() != first.PID() {
		t.Errorf("second cluster port %d pid %d, want the first's port %d pid %d",
			second.Port(), second.PID(), first.Port(), first.PID())
	}
	if second.URL(pglocal.DefaultDatabase) != first.URL(pglocal.DefaultDatabase) {
		t.Errorf("second URL differs from the first's")
	}
	conn2 := connect(t, second.URL(pglocal.DefaultDatabase))
	var body string
	if err := conn2.QueryRow(t.Context(), "SELECT body FROM public.shared").Scan(&body); err != nil || body != "from Robin" {
		t.Fatalf("table of the first not visible through the second: %q, %v", body, err)
	}
	_ = conn2.Close(t.Context())

	if err := second.Stop(t.Context()); err != nil {
		t.Fatalf("stop of the attached cluster: %v", err)
	}
	if !pglocal.Alive(first.PID()) {
		t.Fatal("the attached cluster's Stop stopped the owner's server")
	}
	if err := conn.Ping(t.Context()); err != nil {
		t.Fatalf("the first's connection broke after the second's Stop: %v", err)
	}
	_ = conn.Close(t.Context())

	if err := first.Stop(t.Context()); err != nil {
		t.Fatalf("stop of the owner: %v", err)
	}
	assertGone(t, first)
}

func TestStartWaitsWhileOwnerStarts(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	// Another process holds the owner lock but has no server running yet.
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(dir), pglocal.OwnerLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("open lock: %v", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("flock: %v", err)
	}

	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if c, err := pglocal.Start(short, pglocal.Options{Dir: dir, Trust: true}); err == nil {
		_ = c.Stop(context.Background())
		t.Fatal("Start succeeded while another process held the owner lock and no server ran")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a deadline exceeded while waiting", err)
	}
	if procs, err := pglocal.Processes(dir); err != nil || len(procs) != 0 {
		t.Fatalf("processes %v (err %v) in %s while waiting for the owner", procs, err, dir)
	}

	type result struct {
		c   *pglocal.Cluster
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := pglocal.Start(t.Context(), pglocal.Options{Dir: dir, Trust: true})
		done <- result{c, err}
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("Start returned (%v) while the owner lock was held", r.err)
	default:
	}
	_ = lock.Close() // the would-be owner gives up (or dies): the waiting Start takes over
	r := <-done
	if r.err != nil {
		t.Fatalf("start after the lock was released: %v", r.err)
	}
	t.Cleanup(func() { _ = r.c.Stop(context.Background()) })
	conn := connect(t, r.c.URL(pglocal.DefaultDatabase))
	if err := conn.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    pglocal.Options
		want string
	}{
		{name: "no dir", o: pglocal.Options{}, want: "dir"},
		{name: "bad superuser", o: pglocal.Options{Dir: "/nonexistent/data", Superuser: "Robin; DROP"}, want: "superuser"},
		{name: "bad database", o: pglocal.Options{Dir: "/nonexistent/data", Database: "a-b"}, want: "database"},
		{name: "bad setting", o: pglocal.Options{Dir: "/nonexistent/data", Settings: map[string]string{"bad name": "1"}}, want: "setting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := pglocal.Start(t.Context(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestStartFailsOnUntraversableParent(t *testing.T) {
	t.Parallel()
	base := t.TempDir() // 0700 and owned by the test user
	dir := filepath.Join(base, "data")
	c, err := pglocal.Start(t.Context(), pglocal.Options{Dir: dir, Trust: true})
	if os.Geteuid() != 0 {
		// Not root: the server runs as this user, who owns base, so it must start.
		if err != nil {
			t.Fatalf("start as the owner: %v", err)
		}
		if err := c.Stop(t.Context()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		return
	}
	if err == nil {
		_ = c.Stop(t.Context())
		t.Fatal("start succeeded although the server account cannot enter the parent directory")
	}
	// t.TempDir's own parent is 0700 too, and the check names the first directory it meets.
	if !strings.Contains(err.Error(), "cannot traverse "+filepath.Dir(base)) {
		t.Errorf("err = %v, want it to name %s as not traversable", err, filepath.Dir(base))
	}
}

func TestProcessesFindsNothingInEmptyDir(t *testing.T) {
	t.Parallel()
	procs, err := pglocal.Processes(t.TempDir())
	if err != nil {
		t.Fatalf("processes: %v", err)
	}
	if len(procs) != 0 {
		t.Errorf("processes = %v, want none", procs)
	}
}

func TestProcessesFindsServerProcesses(t *testing.T) {
	t.Parallel()
	c := start(t, pglocal.Options{Dir: dataDir(t), Trust: true})
	procs, err := pglocal.Processes(c.Dir())
	if err != nil {
		t.Fatalf("processes: %v", err)
	}
	found := false
	for _, p := range procs {
		found = found || p == c.PID()
	}
	if !found {
		t.Errorf("processes %v do not include the postmaster %d", procs, c.PID())
	}
}

func TestErrNotInstalledNamesTheFix(t *testing.T) {
	t.Parallel()
	if !strings.Contains(pglocal.ErrNotInstalled.Error(), "apt-get install postgresql") {
		t.Errorf("ErrNotInstalled = %q, want it to say apt-get install postgresql", pglocal.ErrNotInstalled)
	}
	if !errors.Is(fmt.Errorf("wrap: %w", pglocal.ErrNotInstalled), pglocal.ErrNotInstalled) {
		t.Error("ErrNotInstalled does not survive wrapping")
	}
}
