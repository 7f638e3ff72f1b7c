package domain

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/ingest"
)

// Kind is what a record of the ingester is.
type Kind string

// The kinds of record.
const (
	// KindPR is a pull request, written as a thread.
	KindPR Kind = "pr"
	// KindIssue is an issue, written as a thread.
	KindIssue Kind = "issue"
	// KindCommit is a commit, written as a message.
	KindCommit Kind = "commit"
	// KindBranch is the "commits" thread of a branch, started by its first commit's message.
	KindBranch Kind = "branch"
)

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindPR, KindIssue, KindCommit, KindBranch:
		return true
	}
	return false
}

// Noun is how a report line or a reference names the kind.
func (k Kind) Noun() string {
	switch k {
	case KindPR:
		return "pull request"
	case KindIssue:
		return "issue"
	case KindCommit:
		return "commit"
	}
	return "branch"
}

// The natural keys of spec 08. A commit's key is global (a commit id names the same commit in
// every clone); the numbers of issues and pull requests are per repository, so their keys carry
// it. Chat stores them as the external key of the record's message, unique per instance.

// CommitKey is the natural key of a commit.
func CommitKey(sha string) string { return "git:commit:" + sha }

// PRKey is the natural key of a pull request of repo.
func PRKey(repo string, number int) string { return "gh:pr:" + repo + "#" + strconv.Itoa(number) }

// IssueKey is the natural key of an issue of repo.
func IssueKey(repo string, number int) string {
	return "gh:issue:" + repo + "#" + strconv.Itoa(number)
}

// BranchKey is the natural key of the "commits" thread of a branch of repo. It is the
// ingester's own (chat knows the thread by its first message's key): the repository is part of
// it, so two repositories with a branch main get a thread each.
func BranchKey(repo, branch string) string { return "git:branch:" + repo + ":" + branch }

// LaterKey is the external key of the reply that lists the references of the record key that
// were written after it in the same pass, so a rerun does not post it twice.
func LaterKey(key string) string { return key + ":refs" }

// CommitPrefix is the key prefix of the commits whose id starts with short.
func CommitPrefix(short string) string { return "git:commit:" + short }

// Record is a record the ingester wrote: its natural key and where chat put it. It is stored in
// the same transaction as the chat write, so it exists exactly when the chat message does.
type Record struct {
	// Key is the natural key.
	Key string
	// Kind is what the record is.
	Kind Kind
	// Repository is the repository's name in keys.
	Repository string
	// ChannelID, ThreadID and MessageID place the record: the thread of a pull request, an
	// issue or a branch and its first message; a commit's message and its thread.
	ChannelID, ThreadID, MessageID uuid.UUID
	// MergeCommit is the commit id a merged pull request was merged as; empty otherwise.
	MergeCommit string
	// CreatedAt is when the record was written, in UTC.
	CreatedAt time.Time
}

// Cursor is where a section of a repository's passes stands: the next pass starts there.
type Cursor struct {
	// Repository is the repository's name in keys.
	Repository string
	// Section is the section.
	Section ingest.Section
	// ChannelID is the channel the repository is ingested into.
	ChannelID uuid.UUID
	// Position is an RFC 3339 time (pull requests and issues: the updated_at floor of the next
	// pass, inclusive) or a commit id (commits: the next pass walks what HEAD has beyond it).
	Position string
	// UpdatedAt is when the cursor was last written, in UTC.
	UpdatedAt time.Time
}

// FormatTime is how a time is written into a cursor: RFC 3339 in UTC with nanoseconds.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads a time written by FormatTime, or any RFC 3339 time; ok is false otherwise.
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}
