package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/pglocal"
)

func TestLeftoversDetectsWhatRemains(t *testing.T) {
	t.Parallel()
	// A process that has exited and been reaped: its pid is free.
	done := exec.CommandContext(t.Context(), "true")
	if err := done.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	existing := t.TempDir()
	missing := filepath.Join(t.TempDir(), "gone")

	tests := []struct {
		name string
		pids []int
		dir  string
		want []string
	}{
		{name: "nothing started", want: nil},
		{name: "all gone", pids: []int{done.Process.Pid}, dir: missing, want: nil},
		{name: "process alive", pids: []int{os.Getpid()}, dir: missing, want: []string{"still running"}},
		{name: "dir remains", pids: []int{done.Process.Pid}, dir: existing, want: []string{existing + " still exists"}},
		{name: "both", pids: []int{os.Getpid()}, dir: existing, want: []string{"still running", "still exists"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := leftovers(tc.pids, tc.dir)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("leftovers = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("leftovers = nil, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("leftovers = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestLeftoversSeesProcessesInDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "sleep", "60")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	err := leftovers(nil, dir)
	if err == nil || !strings.Contains(err.Error(), "still work in") {
		t.Errorf("leftovers = %v, want it to report the process working in %s", err, dir)
	}
}

func TestGuardianCleansUpAfterTheTestBinary(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "bothy-pgtest-guarded")
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	// A stand-in server: working in the data directory, named in its pid file.
	server := exec.CommandContext(t.Context(), "sleep", "60")
	server.Dir = data
	if err := server.Start(); err != nil {
		t.Fatalf("start stand-in: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	pidLine := []byte(strings.Join([]string{strconv.Itoa(server.Process.Pid), data, ""}, "\n"))
	if err := os.WriteFile(filepath.Join(data, "postmaster.pid"), pidLine, 0o600); err != nil {
		t.Fatalf("write pid file: %v", err)
	}

	g, err := startGuardian(dir)
	if err != nil {
		t.Fatalf("start guardian: %v", err)
	}
	// What the death of the test binary does: the pipe's write end closes.
	if err := g.release(); err != nil {
		t.Fatalf("guardian: %v", err)
	}
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "quit") {
			t.Errorf("stand-in ended with %v, want SIGQUIT", err)
		}
	case <-time.After(30 * time.Second):
		_ = server.Process.Kill()
		t.Fatal("guardian did not stop the stand-in server")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory after guardian: %v, want it removed", err)
	}
}

func TestDockerProbeIsFast(t *testing.T) {
	t.Parallel()
	start := time.Now()
	dockerAvailable(context.Background())
	if d := time.Since(start); d > 2*dockerProbeTimeout {
		t.Errorf("docker probe took %v", d)
	}
}

func TestMissingPostgresNamesTheFix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "no binaries", err: fmt.Errorf("pglocal: %w", pglocal.ErrNotInstalled), want: "no Docker engine answered and pglocal: postgresql server binaries"},
		{name: "other", err: errors.New("pglocal: initdb: boom"), want: "pglocal: initdb: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := explainLocal(tc.err)
			if !strings.HasPrefix(got.Error(), tc.want) || !errors.Is(got, tc.err) {
				t.Errorf("explainLocal = %v, want prefix %q wrapping the cause", got, tc.want)
			}
			if errors.Is(tc.err, pglocal.ErrNotInstalled) && !strings.Contains(got.Error(), "apt-get install postgresql") {
				t.Errorf("explainLocal = %v, want it to say apt-get install postgresql", got)
			}
		})
	}
}
