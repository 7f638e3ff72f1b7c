package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/pglocal"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// Timeouts of the end-to-end tests: generous, because a loaded CI machine
// is slow, and each names what it waits for.
const (
	serveWithin    = 30 * time.Second
	readyWithin    = 30 * time.Second
	embeddedWithin = 60 * time.Second // first start creates the cluster
	exitMargin     = 20 * time.Second // on top of http.shutdown_timeout
)

func TestVersion(t *testing.T) {
	t.Parallel()
	out, stderr, code := runOut(t, environ(), "version")
	if code != 0 {
		t.Fatalf("bothy version exited %d; stderr: %s", code, stderr)
	}
	var v struct {
		Version   string `json:"version"`
		GoVersion string `json:"go_version"`
		Commit    string `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version output %q is not JSON: %v", out, err)
	}
	if v.GoVersion != runtime.Version() || v.Version == "" || v.Commit == "" {
		t.Fatalf("version = %+v, want version, commit and go_version %s", v, runtime.Version())
	}
}

func TestPrintVersionPrefersTheStampedVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stamped string
		want    string
	}{
		{name: "stamped by make build", stamped: "v0.3.0-2-gabc1234", want: "v0.3.0-2-gabc1234"},
		{name: "plain go build", stamped: "", want: "(devel)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			if err := printVersion(nil, &out, tc.stamped); err != nil {
				t.Fatalf("printVersion: %v", err)
			}
			var v struct {
				Version string `json:"version"`
			}
			if err := json.Unmarshal([]byte(out.String()), &v); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			// A test binary's module version is (devel) as well.
			if v.Version != tc.want {
				t.Fatalf("version = %q, want %q", v.Version, tc.want)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		env      []string
		code     int
		inStderr string
		jsonLine bool // the failure is one JSON log line
	}{
		{name: "no command", args: nil, code: 2, inStderr: "usage:"},
		{name: "help", args: []string{"help"}, code: 0},
		{name: "help of a command", args: []string{"serve", "-h"}, code: 0, inStderr: "-roles"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, inStderr: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"serve", "--colour"}, code: 2, inStderr: "usage:"},
		{name: "stray argument", args: []string{"migrate", "now"}, code: 2, inStderr: `unexpected argument "now"`},
		{name: "typo in a key", args: []string{"serve"}, env: []string{"BOTHY_HTTP_ADRR=127.0.0.1:0"}, code: 1, inStderr: "BOTHY_HTTP_ADRR", jsonLine: true},
		{name: "bad log level", args: []string{"serve"}, env: []string{"BOTHY_LOG_LEVEL=loud"}, code: 1, inStderr: "log.level", jsonLine: true},
		{name: "missing config file", args: []string{"migrate", "--config", "/nonexistent/bothy.yaml"}, code: 1, inStderr: "bothy.yaml", jsonLine: true},
		{name: "unknown role", args: []string{"serve", "--roles", "gatway"}, env: []string{"BOTHY_DATABASE_URL=postgres://bothy@127.0.0.1:1/bothy"}, code: 1, inStderr: "gatway", jsonLine: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runOut(t, environ(tc.env...), tc.args...)
			if code != tc.code {
				t.Fatalf("exit code = %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Fatalf("stderr does not mention %q: %s", tc.inStderr, stderr)
			}
			if tc.jsonLine {
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				var rec struct {
					Level string `json:"level"`
					Msg   string `json:"msg"`
					Error string `json:"error"`
				}
				if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec.Level != "ERROR" || rec.Error == "" {
					t.Fatalf("stderr is not one JSON error line: %s", stderr)
				}
			}
		})
	}
}

// TestServeStopsOnSIGTERM runs bothy serve against a migrated database,
// waits until it is ready and expects a clean exit on SIGTERM.
func TestServeStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	p := start(t, environ(
		"BOTHY_DATABASE_URL="+pgtest.URL(t),
		"BOTHY_HTTP_ADDR=127.0.0.1:0",
		"BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s",
	), "serve", "--roles", "api")
	base := p.baseURL(serveWithin)
	p.waitReady(base, readyWithin)
	p.stop(syscall.SIGTERM, 5*time.Second+exitMargin)
	if log := p.log(); !strings.Contains(log, `"msg":"http drained"`) {
		t.Fatalf("log lacks the drain. Log:\n%s", log)
	}
}

// TestServeMaintenanceRole runs bothy serve with the maintenance role
// alone: it runs the partition upkeep at once and stops cleanly on SIGTERM.
func TestServeMaintenanceRole(t *testing.T) {
	t.Parallel()
	p := start(t, environ("BOTHY_DATABASE_URL="+pgtest.URL(t)), "serve", "--roles", "maintenance")
	p.waitLog(`"msg":"partition upkeep done"`, serveWithin)
	p.stop(syscall.SIGTERM, exitMargin)
	if log := p.log(); !strings.Contains(log, `"msg":"maintenance stopped"`) || strings.Contains(log, `"msg":"serving http"`) {
		t.Fatalf("log of a maintenance-only process:\n%s", log)
	}
}

// TestServeDefaultRoles runs bothy serve without --roles: it serves HTTP and
// runs the maintenance role, and stops both on SIGTERM.
func TestServeDefaultRoles(t *testing.T) {
	t.Parallel()
	p := start(t, environ(
		"BOTHY_DATABASE_URL="+pgtest.URL(t),
		"BOTHY_HTTP_ADDR=127.0.0.1:0",
		"BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s",
	), "serve")
	base := p.baseURL(serveWithin)
	p.waitReady(base, readyWithin)
	p.waitLog(`"msg":"partition upkeep done"`, serveWithin)
	p.stop(syscall.SIGTERM, 5*time.Second+exitMargin)
	if log := p.log(); !strings.Contains(log, `"msg":"http drained"`) || !strings.Contains(log, `"msg":"maintenance stopped"`) {
		t.Fatalf("log lacks the drain or the end of maintenance. Log:\n%s", log)
	}
}

// TestMaintain runs bothy maintain twice on a migrated database: each run
// prints its report as one line of JSON; the first creates the partitions
// around now (the pgtest template is migrated without setup), the second has
// nothing left to create.
func TestMaintain(t *testing.T) {
	t.Parallel()
	env := environ("BOTHY_DATABASE_URL=" + pgtest.URL(t))
	type report struct {
		Created          []json.RawMessage `json:"created"`
		Dropped          []json.RawMessage `json:"dropped"`
		MovedFromDefault *int64            `json:"moved_from_default"`
		HorizonSeq       *int64            `json:"horizon_seq"`
	}
	maintain := func() report {
		t.Helper()
		out, stderr, code := runOut(t, env, "maintain")
		if code != 0 {
			t.Fatalf("bothy maintain exited %d; stderr: %s", code, stderr)
		}
		var rep report
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil || rep.Created == nil || rep.Dropped == nil || rep.MovedFromDefault == nil || rep.HorizonSeq == nil {
			t.Fatalf("maintain output %q is not a full upkeep report (%v)", out, err)
		}
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Fatalf("maintain output is not one line: %q", out)
		}
		return rep
	}
	first := maintain()
	if len(first.Created) == 0 {
		t.Fatal("the first bothy maintain created no partition")
	}
	if second := maintain(); len(second.Created) != 0 || len(second.Dropped) != 0 {
		t.Fatalf("the second bothy maintain changed partitions: %+v", second)
	}
}

// TestMigrate runs bothy migrate against a database bothy never migrated
// and expects nothing pending afterwards.
func TestMigrate(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(t.Context()) })
	wiretest.Unmigrate(t, conn)
	pending := func() int {
		t.Helper()
		pool, err := wire.NewPool(t.Context(), dbURL, 2)
		if err != nil {
			t.Fatalf("pool: %v", err)
		}
		defer pool.Close()
		n, err := migrate.Pending(t.Context(), pool, wire.Migrations())
		if err != nil {
			t.Fatalf("pending: %v", err)
		}
		return n
	}
	if n := pending(); n == 0 {
		t.Fatal("Pending = 0 before bothy migrate, want > 0 (the schemas are gone)")
	}

	out, stderr, code := runOut(t, environ("BOTHY_DATABASE_URL="+dbURL), "migrate")
	if code != 0 {
		t.Fatalf("bothy migrate exited %d; stderr: %s", code, stderr)
	}
	var res struct {
		Applied *int `json:"applied"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Applied == nil {
		t.Fatalf("migrate output %q is not {\"applied\": n}", out)
	}
	if n := pending(); n != 0 {
		t.Fatalf("Pending after bothy migrate = %d, want 0", n)
	}

	// A second run is a no-op.
	out, stderr, code = runOut(t, environ("BOTHY_DATABASE_URL="+dbURL), "migrate")
	if code != 0 || strings.TrimSpace(out) != `{"applied":0}` {
		t.Fatalf("second bothy migrate = %d %q, want 0 {\"applied\":0}; stderr: %s", code, out, stderr)
	}
}

// TestEmbeddedDefault runs bothy serve --bootstrap-owner without
// database.url, as make run does: it creates the embedded default under
// embedded.dir, migrates it, creates the owner, prints their token and a
// first curl command on stdout (never in the log) and becomes ready; SIGINT
// stops bothy and its cluster. A second start reuses the cluster's data and
// prints nothing.
func TestEmbeddedDefault(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(tempDir(t), "embedded")
	env := environ(
		"BOTHY_EMBEDDED_DIR="+dir,
		"BOTHY_HTTP_ADDR=127.0.0.1:0",
		"BOTHY_HTTP_SHUTDOWN_TIMEOUT=5s",
	)
	dataDir := filepath.Join(dir, "pgdata")

	type run struct {
		ready   time.Duration
		version os.FileInfo
		secret  []byte
		stdout  string
	}
	serveOnce := func(name string) run {
		t.Helper()
		began := time.Now()
		p := start(t, env, "serve", "--bootstrap-owner")
		base := p.baseURL(embeddedWithin)
		p.waitReady(base, embeddedWithin-time.Since(began))
		ready := time.Since(began)
		if token := announcedToken(t, p.output(), base); token != "" {
			if status := getMe(t, base, token); status != http.StatusOK {
				t.Fatalf("%s: GET /api/v1/me with the printed token = %d, want 200", name, status)
			}
			if strings.Contains(p.log(), token) {
				t.Fatalf("%s: the log holds the owner's token. Log:\n%s", name, p.log())
			}
		}

		procs, err := pglocal.Processes(dataDir)
		if err != nil || len(procs) == 0 {
			t.Fatalf("%s: no postgres process under %s while serving (%v)", name, dataDir, err)
		}
		p.stop(syscall.SIGINT, 5*time.Second+exitMargin)
		if procs, err := pglocal.Processes(dataDir); err != nil || len(procs) != 0 {
			t.Fatalf("%s: postgres processes %v (%v) remain under %s after bothy exited. Log:\n%s", name, procs, err, dataDir, p.log())
		}
		fi, err := os.Stat(filepath.Join(dataDir, "PG_VERSION"))
		if err != nil {
			t.Fatalf("%s: cluster not created: %v", name, err)
		}
		secret, err := os.ReadFile(filepath.Join(dir, "password")) //nolint:gosec // a file in the test's own temporary directory.
		if err != nil {
			t.Fatalf("%s: password file: %v", name, err)
		}
		return run{ready: ready, version: fi, secret: secret, stdout: p.output()}
	}

	first := serveOnce("first start")
	if !strings.Contains(first.stdout, "curl -H \"Authorization: Bearer bothy_") {
		t.Fatalf("the first start printed no owner token and curl command; stdout:\n%s", first.stdout)
	}
	second := serveOnce("second start")
	if second.stdout != "" {
		t.Fatalf("the second start printed %q, want nothing (the owner exists)", second.stdout)
	}
	t.Logf("ready after %v on the first start, %v on the second", first.ready, second.ready)
	if !first.version.ModTime().Equal(second.version.ModTime()) || string(first.secret) != string(second.secret) {
		t.Fatal("the second start created a new cluster instead of reusing the data")
	}
	if second.ready > 10*time.Second {
		t.Fatalf("second start ready after %v, want within 10s", second.ready)
	}
}

// TestMigrateEmbeddedDefault runs bothy migrate without database.url: it
// starts the embedded default, migrates it, prints the count and stops the
// cluster again.
func TestMigrateEmbeddedDefault(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(tempDir(t), "embedded")
	out, stderr, code := runOut(t, environ("BOTHY_EMBEDDED_DIR="+dir), "migrate")
	if code != 0 {
		t.Fatalf("bothy migrate on the embedded default exited %d; stderr: %s", code, stderr)
	}
	var res struct {
		Applied *int `json:"applied"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Applied == nil {
		t.Fatalf("migrate output %q is not {\"applied\": n}", out)
	}
	if procs, err := pglocal.Processes(filepath.Join(dir, "pgdata")); err != nil || len(procs) != 0 {
		t.Fatalf("postgres processes %v (%v) remain after bothy migrate; stderr: %s", procs, err, stderr)
	}
}
