package domain_test

import (
	"errors"
	"strings"
	"testing"

	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/ingest/ingesttest"
)

func TestClassifyGitFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stderr string
		want   domain.GitFailure
	}{
		{"fatal: not a git repository (or any of the parent directories): .git", domain.GitFailureNotRepository},
		{"fatal: bad revision '0123456789abcdef0123456789abcdef01234567..HEAD'", domain.GitFailureUnknownRevision},
		{"fatal: ambiguous argument 'x..HEAD': unknown revision or path not in the working tree.", domain.GitFailureUnknownRevision},
		{"fatal: bad object 0123456", domain.GitFailureUnknownRevision},
		{"fatal: Invalid revision range 0000000000000000000000000000000000000000..HEAD", domain.GitFailureUnknownRevision},
		{"fatal: could not fetch 0123 from promisor remote\nerror: object is not in the object database", domain.GitFailureMissingObject},
		{"error: PROMISOR remote: Missing Object 0123", domain.GitFailureMissingObject},
		{"fatal: missing object 0123 in the pack", domain.GitFailureOther},
		{"fatal: Authentication failed for 'https://example.com/'", domain.GitFailureOther},
		{"fatal: unable to access: Could not resolve host", domain.GitFailureOther},
		{"", domain.GitFailureOther},
	}
	for _, tc := range tests {
		if got := domain.ClassifyGitFailure(tc.stderr); got != tc.want {
			t.Errorf("ClassifyGitFailure(%q) = %v, want %v", tc.stderr, got, tc.want)
		}
	}
	for f, want := range map[domain.GitFailure]string{
		domain.GitFailureOther: "other", domain.GitFailureNotRepository: "not a repository",
		domain.GitFailureUnknownRevision: "unknown revision", domain.GitFailureMissingObject: "missing promisor object",
	} {
		if f.String() != want {
			t.Errorf("String = %q, want %q", f.String(), want)
		}
	}
}

func TestGitErrorMasksStderr(t *testing.T) {
	t.Parallel()
	exit := errors.New("exit status 128")
	secret := ingesttest.Secrets()[10].Value
	e := &domain.GitError{Phase: "log", Stderr: "fatal: unable to access '" + secret + "': not a git repository", Err: exit, Mask: ingesttest.Masker()}
	msg := e.Error()
	if leaks := ingesttest.Leaks(msg); len(leaks) > 0 {
		t.Fatalf("Error() = %q leaks %v", msg, leaks)
	}
	if !strings.HasPrefix(msg, "git log: not a repository: ") || !errors.Is(e, exit) || e.Class() != domain.GitFailureNotRepository {
		t.Fatalf("Error() = %q, class %v", msg, e.Class())
	}
	if got := (&domain.GitError{Phase: "rev-parse", Err: exit, Mask: ingesttest.Masker()}).Error(); got != "git rev-parse: exit status 128" {
		t.Fatalf("Error() without stderr = %q", got)
	}
}
