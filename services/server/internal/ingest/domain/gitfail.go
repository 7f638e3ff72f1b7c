package domain

import (
	"fmt"
	"strings"
)

// GitFailure is the class of a failed git command. The classes are deliberately narrow: only
// the phrases below decide, ASCII case-insensitively, so an authentication, network, spawn or
// other failure is never mistaken for one the pass handles (GitFailureOther).
type GitFailure int

// The classes of ClassifyGitFailure.
const (
	// GitFailureOther is every failure the pass does not handle: it stops the pass.
	GitFailureOther GitFailure = iota
	// GitFailureNotRepository: the path is not a git work tree (--repo is wrong).
	GitFailureNotRepository
	// GitFailureUnknownRevision: a revision (the commits cursor) is not in the repository, as
	// after a history rewrite; the pass then walks the whole history, skipping what exists.
	GitFailureUnknownRevision
	// GitFailureMissingObject: a partial clone's promisor remote no longer has an object the
	// clone needs; fetching again repairs it. The pass reports it and stops.
	GitFailureMissingObject
)

// String names the class.
func (f GitFailure) String() string {
	switch f {
	case GitFailureNotRepository:
		return "not a repository"
	case GitFailureUnknownRevision:
		return "unknown revision"
	case GitFailureMissingObject:
		return "missing promisor object"
	}
	return "other"
}

// ClassifyGitFailure classifies a failed git command by its standard error.
func ClassifyGitFailure(stderr string) GitFailure {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "promisor") && (strings.Contains(s, "not in the object database") || strings.Contains(s, "missing object")):
		return GitFailureMissingObject
	case strings.Contains(s, "not a git repository"):
		return GitFailureNotRepository
	case strings.Contains(s, "unknown revision"), strings.Contains(s, "bad revision"), strings.Contains(s, "bad object"),
		strings.Contains(s, "invalid revision range"):
		return GitFailureUnknownRevision
	}
	return GitFailureOther
}

// GitError is a failed git command: which pass it was (Phase: "log", "name-only", ...), what
// it printed on standard error, and the error of running it. Error masks the standard error, so
// a credential in a remote URL that git echoes does not travel on; Stderr stays raw for
// ClassifyGitFailure.
type GitError struct {
	// Phase names the git command of the pass.
	Phase string
	// Stderr is what git printed on standard error.
	Stderr string
	// Err is the error of running it (an *exec.ExitError, or a failure to start).
	Err error
	// Mask masks Stderr in Error.
	Mask Masker
}

// Error describes the failure with its class and masked standard error.
func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Mask.CleanLine(e.Stderr))
	if msg == "" {
		return fmt.Sprintf("git %s: %v", e.Phase, e.Err)
	}
	return fmt.Sprintf("git %s: %s: %s", e.Phase, e.Class(), TruncateRunes(msg, 300))
}

// Unwrap returns the error of running git.
func (e *GitError) Unwrap() error { return e.Err }

// Class classifies the failure.
func (e *GitError) Class() GitFailure { return ClassifyGitFailure(e.Stderr) }
