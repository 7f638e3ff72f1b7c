// Package git reads a local clone for the ingester by running the git command: never through
// a shell (os/exec with an argument list), with a machine-readable log format whose control-byte
// separators travel as raw bytes in one argument, and a separate --name-only pass for the
// files each commit touched (interleaving file names with the metadata format has no
// unambiguous delimiter).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
)

// Repo reads one clone; it implements app.Git.
type Repo struct {
	git  string
	dir  string
	mask domain.Masker
}

var _ app.Git = (*Repo)(nil)

// New returns a Repo for the clone at dir, with the git found on PATH, whose errors mask git's
// standard error with mask; an error when there is no git.
func New(dir string, mask domain.Masker) (*Repo, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git: the git command is not on PATH: %w", err)
	}
	if dir == "" {
		return nil, errors.New("git: no repository path")
	}
	return &Repo{git: path, dir: dir, mask: mask}, nil
}

// env is the environment of every git command: the process's, with prompts off (a command
// that would ask for credentials fails instead of hanging), messages in English for the
// failure classifier, and no pager.
func env() []string {
	return append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "LANGUAGE=C", "GIT_PAGER=cat", "PAGER=cat")
}

// run runs git with args in the clone and returns its standard output. A command that fails
// is a *domain.GitError of the phase. Exit status 1 is returned as ok false, without error,
// when quiet1 is set (rev-parse --verify --quiet, symbolic-ref --quiet, config --get).
func (r *Repo) run(ctx context.Context, phase string, quiet1 bool, args ...string) (out []byte, ok bool, err error) {
	cmd := exec.CommandContext(ctx, r.git, args...) //nolint:gosec // git from PATH with an argument list, no shell; revisions are checked commit ids.
	cmd.Dir = r.dir
	cmd.Env = env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), true, nil
	case ctx.Err() != nil:
		return nil, false, fmt.Errorf("git %s: %w", phase, ctx.Err())
	case quiet1 && errors.As(err, &exit) && exit.ExitCode() == 1:
		return nil, false, nil
	}
	return nil, false, &domain.GitError{Phase: phase, Stderr: stderr.String(), Err: err, Mask: r.mask}
}

// Repository implements app.Git.
func (r *Repo) Repository(ctx context.Context) (domain.RawRepository, error) {
	top, _, err := r.run(ctx, "rev-parse", false, "rev-parse", "--show-toplevel")
	if err != nil {
		return domain.RawRepository{}, err
	}
	branch, _, err := r.run(ctx, "symbolic-ref", true, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return domain.RawRepository{}, err
	}
	_, hasHead, err := r.run(ctx, "rev-parse", true, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return domain.RawRepository{}, err
	}
	remote, _, err := r.run(ctx, "config", true, "config", "--get", "remote.origin.url")
	if err != nil {
		return domain.RawRepository{}, err
	}
	return domain.RawRepository{
		RemoteURL:  strings.TrimSpace(string(remote)),
		TopLevel:   strings.TrimSpace(string(top)),
		Branch:     strings.TrimSpace(string(branch)),
		HasCommits: hasHead,
	}, nil
}

// revisions is the range of a walk: HEAD's history, or what HEAD has beyond since.
func revisions(since string) ([]string, error) {
	if since == "" {
		return []string{"HEAD", "--"}, nil
	}
	if !domain.ValidSHA(since) {
		// Only a commit id may reach git's argument list as a revision.
		return nil, errors.New("git: the cursor is not a commit id")
	}
	return []string{since + "..HEAD", "--"}, nil
}

// logArgs are the options both walks share: parents before children, oldest first, records
// separated by NUL, and nothing a configuration could add (signatures, colour, notes).
var logArgs = []string{"-c", "log.showSignature=false", "log", "-z", "--topo-order", "--reverse", "--no-color", "--no-notes", "--no-decorate"}

// Log implements app.Git.
func (r *Repo) Log(ctx context.Context, since string) ([]domain.RawCommit, []error, error) {
	revs, err := revisions(since)
	if err != nil {
		return nil, nil, err
	}
	args := append(append(append([]string{}, logArgs...), "--pretty=format:"+domain.LogFormat), revs...)
	out, _, err := r.run(ctx, "log", false, args...)
	if err != nil {
		return nil, nil, err
	}
	commits, errs := domain.ParseLog(out)
	return commits, errs, nil
}

// TouchedFiles implements app.Git.
func (r *Repo) TouchedFiles(ctx context.Context, since string) (map[string][]string, error) {
	revs, err := revisions(since)
	if err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, logArgs...), "--name-only", "--no-renames", "--pretty=format:"+domain.NameOnlyFormat), revs...)
	out, _, err := r.run(ctx, "log --name-only", false, args...)
	if err != nil {
		return nil, err
	}
	files, _ := domain.ParseNameOnly(out)
	return files, nil
}
