package pglocal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeBinDir creates dir with executable stand-ins for the given PostgreSQL programs.
func fakeBinDir(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	for _, n := range names {
		//nolint:gosec // G306: a stand-in program must be executable.
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o750); err != nil {
			t.Fatalf("write %s: %v", n, err)
		}
	}
	return dir
}

func TestFindBinaries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	all := []string{"initdb", "pg_ctl", "postgres"}
	onPath := fakeBinDir(t, filepath.Join(root, "path"), all...)
	partial := fakeBinDir(t, filepath.Join(root, "partial"), "pg_ctl")
	fakeBinDir(t, filepath.Join(root, "lib", "9", "bin"), all...)
	fakeBinDir(t, filepath.Join(root, "lib", "15", "bin"), all...)
	fakeBinDir(t, filepath.Join(root, "lib", "16", "bin"), "initdb")
	empty := fakeBinDir(t, filepath.Join(root, "empty"))
	glob := filepath.Join(root, "lib", "*", "bin")

	tests := []struct {
		name    string
		path    string
		glob    string
		wantDir string
	}{
		{name: "on path", path: partial + ":" + onPath, glob: glob, wantDir: onPath},
		{name: "newest complete versioned dir", path: empty, glob: glob, wantDir: filepath.Join(root, "lib", "15", "bin")},
		{name: "missing", path: partial + ":" + empty, glob: filepath.Join(empty, "*", "bin")},
		{name: "empty path", path: "", glob: filepath.Join(empty, "*", "bin")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := findBinaries(tc.path, tc.glob)
			if tc.wantDir == "" {
				if !errors.Is(err, ErrNotInstalled) {
					t.Fatalf("err = %v, want ErrNotInstalled", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("findBinaries: %v", err)
			}
			for _, p := range []string{b.initdb, b.pgCtl, b.postgres} {
				if filepath.Dir(p) != tc.wantDir {
					t.Errorf("binary %s not from %s", p, tc.wantDir)
				}
			}
		})
	}
}

func TestCheckTraversable(t *testing.T) {
	t.Parallel()
	const stranger = 54321 // a uid and gid that own nothing here
	owner := ownerOf(t, t.TempDir())

	tests := []struct {
		name    string
		mode    os.FileMode
		uid     uint32
		wantErr bool
	}{
		{name: "private dir, stranger", mode: 0o700, uid: stranger, wantErr: true},
		{name: "others may search", mode: 0o711, uid: stranger},
		{name: "world readable", mode: 0o755, uid: stranger},
		{name: "group only, stranger", mode: 0o750, uid: stranger, wantErr: true},
		{name: "private dir, owner", mode: 0o700, uid: owner},
		{name: "owner without search", mode: 0o601, uid: owner, wantErr: owner != 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			for _, d := range []string{filepath.Dir(base), base} {
				if err := os.Chmod(d, 0o711); err != nil { //nolint:gosec // G302: the case needs searchable parents.
					t.Fatalf("chmod: %v", err)
				}
			}
			locked := filepath.Join(base, "locked")
			if err := os.Mkdir(locked, 0o700); err != nil {
				t.Fatalf("mkdir: %v", err)
			}
			if err := os.Chmod(locked, tc.mode); err != nil {
				t.Fatalf("chmod: %v", err)
			}
			t.Cleanup(func() { _ = os.Chmod(locked, 0o700) }) //nolint:gosec // G302: back to private, so TempDir can remove it.
			err := checkTraversable(filepath.Join(locked, "data"), "someone", tc.uid, stranger)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), locked) {
					t.Fatalf("err = %v, want an error naming %s", err, locked)
				}
				return
			}
			if err != nil {
				t.Fatalf("checkTraversable: %v", err)
			}
		})
	}
}

// ownerOf returns the uid owning path, the uid this test runs as.
func ownerOf(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal("no unix owner")
	}
	return st.Uid
}

func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    *Cluster
		db   string
		want string
	}{
		{name: "trust", c: &Cluster{port: 5999, user: "bothy"}, db: "bothy", want: "postgres://bothy@127.0.0.1:5999/bothy?sslmode=disable"},
		//nolint:gosec // G101: a made-up test password.
		{name: "password", c: &Cluster{port: 6000, user: "bothy", password: "s3cret"}, db: "chat", want: "postgres://bothy:s3cret@127.0.0.1:6000/chat?sslmode=disable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.c.URL(tc.db); got != tc.want {
				t.Errorf("URL = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadPidFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		content   string
		wantPID   int
		wantPort  int
		wantReady bool
		wantErr   bool
	}{
		{name: "ready", content: "4242\n/data\n1700000000\n5432\n\n127.0.0.1\n  1 2\nready   \n", wantPID: 4242, wantPort: 5432, wantReady: true},
		{name: "starting", content: "4242\n/data\n1700000000\n5432\n\n127.0.0.1\n  1 2\nstarting\n", wantPID: 4242, wantPort: 5432},
		{name: "short", content: "4243\n/data\n", wantPID: 4243},
		{name: "garbage", content: "not a pid\n", wantErr: true},
		{name: "empty", content: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(tc.content), 0o600); err != nil {
				t.Fatalf("write: %v", err)
			}
			pf, err := readPidFile(dir)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got pid %d", pf.pid)
				}
				return
			}
			want := pidFile{pid: tc.wantPID, port: tc.wantPort, ready: tc.wantReady}
			if err != nil || pf != want {
				t.Errorf("readPidFile = %+v, %v; want %+v", pf, err, want)
			}
		})
	}
}
