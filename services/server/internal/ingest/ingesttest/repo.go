package ingesttest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Repo is a scratch git repository in t.TempDir, written with real git, Alex's identity and
// dates that advance a minute per commit (or Tick) from 2026-01-02, and the machine's git
// configuration ignored, so its history is the same on every run. The git adapter's tests and
// wire's end-to-end ingest tests build their histories with it.
type Repo struct {
	t testing.TB
	// Dir is the repository's working tree.
	Dir string
	n   int
}

// NewRepo initialises an empty repository on branch main.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	r := &Repo{t: t, Dir: filepath.Join(t.TempDir(), "bothy")}
	if err := os.MkdirAll(r.Dir, 0o750); err != nil {
		t.Fatal(err)
	}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the repository with the fixed identity and the current date, and returns
// its trimmed output; a failure fails the test.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // git from PATH with the test's arguments.
	cmd.Dir = r.Dir
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(r.n) * time.Minute).Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Alex", "GIT_AUTHOR_EMAIL=alex@example.com", "GIT_COMMITTER_NAME=Alex",
		"GIT_COMMITTER_EMAIL=alex@example.com", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("git %v: %v: %s", args, err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// Tick advances the repository's clock by a minute, for a commit git makes itself (a merge).
func (r *Repo) Tick() { r.n++ }

// Commit writes the files (path, content pairs; directories made as needed), adds them and
// commits with the message verbatim (empty commits allowed) a minute after the last one; it
// returns the commit id.
func (r *Repo) Commit(message string, files ...string) string {
	r.t.Helper()
	r.Tick()
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(r.Dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o600); err != nil {
			r.t.Fatal(err)
		}
		r.Git("add", "--", files[i])
	}
	r.Git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)
	return r.Git("rev-parse", "HEAD")
}
