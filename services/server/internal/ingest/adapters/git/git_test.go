package git_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gitadapter "bothy.example.com/server/internal/ingest/adapters/git"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func open(t *testing.T, dir string) *gitadapter.Repo {
	t.Helper()
	g, err := gitadapter.New(dir, ingesttest.Masker())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func TestRepository(t *testing.T) {
	t.Parallel()
	r := ingesttest.NewRepo(t)
	g := open(t, r.Dir)
	raw, err := g.Repository(t.Context())
	if err != nil {
		t.Fatalf("Repository of an empty repository: %v", err)
	}
	if raw.HasCommits || raw.Branch != "main" || raw.RemoteURL != "" || filepath.Base(raw.TopLevel) != "bothy" {
		t.Fatalf("empty repository = %+v", raw)
	}
	first := r.Commit("first", "a.txt", "a")
	r.Git("remote", "add", "origin", "https://example.com/alex/bothy.git")
	raw, err = g.Repository(t.Context())
	if err != nil || !raw.HasCommits || raw.RemoteURL != "https://example.com/alex/bothy.git" || raw.Branch != "main" {
		t.Fatalf("Repository = %+v, %v", raw, err)
	}
	// From a subdirectory the work tree is the same; a detached HEAD has no branch.
	r.Commit("second", "sub/b.txt", "b")
	r.Git("checkout", "-q", "--detach", first)
	raw, err = open(t, filepath.Join(r.Dir, "sub")).Repository(t.Context())
	if err == nil {
		t.Fatalf("sub/ is gone at the first commit, Repository = %+v", raw)
	}
	raw, err = g.Repository(t.Context())
	if err != nil || raw.Branch != "" || !raw.HasCommits {
		t.Fatalf("detached Repository = %+v, %v", raw, err)
	}

	_, err = open(t, t.TempDir()).Repository(t.Context())
	var gitErr *domain.GitError
	if !errors.As(err, &gitErr) || gitErr.Class() != domain.GitFailureNotRepository || gitErr.Phase != "rev-parse" {
		t.Fatalf("Repository of a plain directory = %v", err)
	}
	if _, err := gitadapter.New("", ingesttest.Masker()); err == nil {
		t.Fatal("New without a path succeeded")
	}
}

func TestLog(t *testing.T) {
	t.Parallel()
	r := ingesttest.NewRepo(t)
	first := r.Commit("Initial commit\n\nWith a body:\n- one\n- two\n", "README.md", "hello")
	odd := "Odd \x1f subject\n\nBody with \x1e and \x1f and ünïcödé\r\nand a CR.\n"
	second := r.Commit(odd, "a.go", "package a")
	r.Git("checkout", "-q", "-b", "side")
	side := r.Commit("Side work", "side.go", "package side")
	r.Git("checkout", "-q", "main")
	third := r.Commit("Main work", "b.go", "package b")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
	merge := r.Git("rev-parse", "HEAD")
	g := open(t, r.Dir)

	commits, errs, err := g.Log(t.Context(), "")
	if err != nil || len(errs) != 0 {
		t.Fatalf("Log: %v %v", errs, err)
	}
	var shas []string
	for _, c := range commits {
		shas = append(shas, c.SHA)
	}
	// Parents before children, oldest first.
	if len(shas) != 5 || shas[0] != first || shas[1] != second || shas[4] != merge ||
		!slices.Contains(shas[2:4], side) || !slices.Contains(shas[2:4], third) {
		t.Fatalf("Log order = %v, want %s %s {%s %s} %s", shas, first, second, side, third, merge)
	}
	c0 := commits[0]
	if c0.Subject != "Initial commit" || c0.Body != "With a body:\n- one\n- two" || c0.AuthorName != "Alex" ||
		c0.AuthorEmail != "alex@example.com" || c0.Parents != "" || c0.AuthoredAt != "2026-01-02T03:05:05+00:00" {
		t.Fatalf("first commit = %+v", c0)
	}
	// A separator in the subject moves its tail into the body; the body keeps its own bytes.
	c1 := commits[1]
	if c1.Subject != "Odd " || !strings.Contains(c1.Body, "Body with \x1e and \x1f and ünïcödé") || c1.Parents != first {
		t.Fatalf("odd commit = %+v", c1)
	}
	if m := commits[4]; len(strings.Fields(m.Parents)) != 2 || m.Subject != "Merge branch 'side'" {
		t.Fatalf("merge commit = %+v", m)
	}
	for _, c := range commits {
		if _, _, err := domain.NewCommit(c, ingesttest.Masker()); err != nil {
			t.Fatalf("NewCommit(%+v): %v", c, err)
		}
	}

	// Since a commit: what HEAD has beyond it.
	beyond, _, err := g.Log(t.Context(), third)
	if err != nil || len(beyond) != 2 || beyond[0].SHA != side || beyond[1].SHA != merge {
		t.Fatalf("Log since the third commit = %+v, %v", beyond, err)
	}
	none, _, err := g.Log(t.Context(), merge)
	if err != nil || len(none) != 0 {
		t.Fatalf("Log since HEAD = %+v, %v", none, err)
	}
	// A commit the repository does not have is an unknown revision.
	_, _, err = g.Log(t.Context(), strings.Repeat("0", 40))
	var gitErr *domain.GitError
	if !errors.As(err, &gitErr) || gitErr.Class() != domain.GitFailureUnknownRevision {
		t.Fatalf("Log since a missing commit = %v", err)
	}
	// Only a commit id reaches git as a revision.
	for _, bad := range []string{"HEAD~1", "--output=/tmp/x", "main"} {
		if _, _, err := g.Log(t.Context(), bad); err == nil || errors.As(err, &gitErr) {
			t.Fatalf("Log since %q = %v, want a refusal before git runs", bad, err)
		}
		if _, err := g.TouchedFiles(t.Context(), bad); err == nil {
			t.Fatalf("TouchedFiles since %q succeeded", bad)
		}
	}
}

func TestTouchedFiles(t *testing.T) {
	t.Parallel()
	r := ingesttest.NewRepo(t)
	first := r.Commit("first", "a.txt", "a", "dir/with space.txt", "b", "new\nline.txt", "c")
	empty := r.Commit("empty")
	third := r.Commit("third", "a.txt", "changed")
	g := open(t, r.Dir)
	files, err := g.TouchedFiles(t.Context(), "")
	if err != nil {
		t.Fatalf("TouchedFiles: %v", err)
	}
	want := map[string][]string{
		first: {"a.txt", "dir/with space.txt", "new\nline.txt"},
		empty: nil,
		third: {"a.txt"},
	}
	if len(files) != 3 || !slices.Equal(files[first], want[first]) || len(files[empty]) != 0 || !slices.Equal(files[third], want[third]) {
		t.Fatalf("TouchedFiles = %q, want %q", files, want)
	}
	since, err := g.TouchedFiles(t.Context(), empty)
	if err != nil || len(since) != 1 || !slices.Equal(since[third], []string{"a.txt"}) {
		t.Fatalf("TouchedFiles since = %q, %v", since, err)
	}
	if _, err := open(t, t.TempDir()).TouchedFiles(t.Context(), ""); err == nil {
		t.Fatal("TouchedFiles of a plain directory succeeded")
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	r := ingesttest.NewRepo(t)
	r.Commit("first", "a", "a")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := open(t, r.Dir).Log(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("Log with a cancelled context = %v", err)
	}
}
