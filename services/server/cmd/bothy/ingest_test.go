package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/ingest/ingesttest"
	"bothy.example.com/server/internal/wire"
)

// ingestFixture is a migrated database with the demo world, a repository of three commits in
// t.TempDir and a file of pull requests in gh's --json format, one of them long.
type ingestFixture struct {
	db, channel, repo, prs string
}

func newIngestFixture(t *testing.T) ingestFixture {
	t.Helper()
	f := ingestFixture{db: "BOTHY_DATABASE_URL=" + migrated(t)}
	out, stderr, code := runOut(t, environ(f.db), "admin", "demo", "--json")
	if code != 0 {
		t.Fatalf("bothy admin demo exited %d: %s", code, stderr)
	}
	var world struct {
		Spaces []struct {
			Name     string `json:"name"`
			Channels []struct {
				Name string `json:"name"`
				ID   string `json:"id"`
			} `json:"channels"`
		} `json:"spaces"`
	}
	if err := json.Unmarshal([]byte(out), &world); err != nil {
		t.Fatalf("demo output: %v", err)
	}
	f.channel = world.Spaces[0].Channels[0].ID
	f.repo = filepath.Join(t.TempDir(), "bothy")
	if err := os.MkdirAll(f.repo, 0o750); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // git from PATH with this test's arguments.
		cmd.Dir = f.repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Sam",
			"GIT_AUTHOR_EMAIL=sam@example.com", "GIT_COMMITTER_NAME=Sam", "GIT_COMMITTER_EMAIL=sam@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://example.com/sam/tools.git")
	for i, msg := range []string{"First", "Second " + ingesttest.Secrets()[1].Value, "Third"} {
		if err := os.WriteFile(filepath.Join(f.repo, "f"), []byte{byte('a' + i)}, 0o600); err != nil {
			t.Fatal(err)
		}
		git("add", "f")
		git("commit", "-q", "-m", msg)
	}
	prs := `[{"number":1,"title":"Short","body":"` + ingesttest.Secrets()[0].Value + `","state":"OPEN","updatedAt":"2026-01-01T00:00:00Z"},` +
		`{"number":2,"title":"Long","body":"` + strings.Repeat("text ", 200) + `","state":"OPEN","updatedAt":"2026-01-02T00:00:00Z"}]`
	f.prs = filepath.Join(t.TempDir(), "prs.json")
	if err := os.WriteFile(f.prs, []byte(prs), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// report decodes the one line of JSON bothy ingest git printed.
func report(t *testing.T, stdout string) wire.IngestReport {
	t.Helper()
	if strings.Count(strings.TrimSuffix(stdout, "\n"), "\n") != 0 {
		t.Fatalf("stdout is not one line: %q", stdout)
	}
	var rep wire.IngestReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return rep
}

// TestIngestGitCommand runs bothy ingest git twice against the demo world: the first pass
// writes every record and prints the report, the second skips them all; nothing
// credential-shaped reaches stdout or stderr, and stderr (no terminal) has no progress bar.
func TestIngestGitCommand(t *testing.T) {
	t.Parallel()
	f := newIngestFixture(t)
	args := []string{"ingest", "git", "--repo", f.repo, "--channel", f.channel, "--prs-json", f.prs}
	out, stderr, code := runOut(t, environ(f.db), args...)
	if code != 0 {
		t.Fatalf("bothy ingest git exited %d; stdout %s; stderr: %s", code, out, stderr)
	}
	rep := report(t, out)
	if rep.Repository != "sam/tools" || rep.Commits.Created != 3 || rep.PRs.Created != 2 || rep.Issues.Source != "none" || !rep.Done {
		t.Fatalf("report = %+v", rep)
	}
	for what, text := range map[string]string{"stdout": out, "stderr": stderr} {
		if leaks := ingesttest.Leaks(text); len(leaks) > 0 {
			t.Errorf("%s holds %v", what, leaks)
		}
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("a progress bar on a stderr that is no terminal: %q", stderr)
	}
	out, stderr, code = runOut(t, environ(f.db), args...)
	if rep := report(t, out); code != 0 || rep.Commits.Created+rep.PRs.Created != 0 || rep.Budget.Used != 0 {
		t.Fatalf("second pass exited %d with %+v; stderr: %s", code, rep, stderr)
	}
}

// TestIngestGitCommandFailure: a record that fails makes the exit code 1, after the report.
func TestIngestGitCommandFailure(t *testing.T) {
	t.Parallel()
	f := newIngestFixture(t)
	out, stderr, code := runOut(t, environ(f.db, "BOTHY_CHAT_MAX_MESSAGE_BYTES=600"),
		"ingest", "git", "--repo", f.repo, "--channel", f.channel, "--prs-json", f.prs, "--max-items", "2")
	if code != 1 {
		t.Fatalf("bothy ingest git exited %d, want 1; stdout %s; stderr %s", code, out, stderr)
	}
	rep := report(t, out)
	if rep.PRs.Failed != 1 || rep.PRs.Created != 1 || rep.Budget.Used != 2 || rep.Done {
		t.Fatalf("report = %+v", rep)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var last struct {
		Level, Msg, Error string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Level != "ERROR" || last.Msg != "ingest git" || !strings.Contains(last.Error, "1 failures") {
		t.Fatalf("the last line of stderr is not the failure: %s", stderr)
	}
}

func TestIngestCommandLine(t *testing.T) {
	t.Parallel()
	db := "BOTHY_DATABASE_URL=" + migrated(t)
	repo := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{name: "no subcommand", args: []string{"ingest"}, code: 2, inStderr: "missing subcommand (git)"},
		{name: "unknown subcommand", args: []string{"ingest", "svn"}, code: 2, inStderr: `unknown subcommand "svn"`},
		{name: "no repository", args: []string{"ingest", "git", "--channel", "x"}, code: 2, inStderr: "--repo and --channel are required"},
		{name: "no channel", args: []string{"ingest", "git", "--repo", repo}, code: 2, inStderr: "--repo and --channel are required"},
		{name: "a negative budget", args: []string{"ingest", "git", "--repo", repo, "--channel", "x", "--max-items", "-1"}, code: 2, inStderr: "--max-items"},
		{name: "a channel that is no id", args: []string{"ingest", "git", "--repo", repo, "--channel", "tickets"}, code: 1, inStderr: "channel"},
		{name: "an unknown channel", args: []string{"ingest", "git", "--repo", repo, "--channel", "0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"}, code: 1, inStderr: "channel"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, stderr, code := runOut(t, environ(db), tc.args...)
			if code != tc.code || out != "" {
				t.Fatalf("exit code %d with stdout %q, want %d and nothing; stderr: %s", code, out, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Fatalf("stderr does not mention %q: %s", tc.inStderr, stderr)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"ingest", "--help"}, nil, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "bothy ingest git --repo PATH") {
		t.Fatalf("ingest --help = %d: %s", code, stdout.String())
	}
}

func TestProgressBar(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if isTerminal(&buf) {
		t.Fatal("a buffer is a terminal")
	}
	b := &progressBar{w: &buf}
	b.update(wire.IngestProgress{Section: "commits", Done: 1, Total: 4})
	b.update(wire.IngestProgress{Section: "commits", Done: 1, Total: 4})
	b.update(wire.IngestProgress{Section: "commits", Done: 4, Total: 4})
	b.update(wire.IngestProgress{Section: "prs", Done: 0, Total: 0})
	b.finish()
	want := "\rcommits  [#######.......................] 1/4" +
		"\rcommits  [##############################] 4/4" +
		"\rprs      [..............................] 0/0\n"
	if buf.String() != want {
		t.Fatalf("bar =\n%q\nwant\n%q", buf.String(), want)
	}
	var none *progressBar
	none.finish()
	buf.Reset()
	(&progressBar{w: &buf}).finish()
	if buf.Len() != 0 {
		t.Fatalf("a bar that drew nothing ends a line: %q", buf.String())
	}
}
