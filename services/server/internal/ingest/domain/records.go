package domain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The raw records are what the sources read, field for field, before anything else touches
// them. Every field written by people (names, emails, titles, bodies, ref names, logins, labels,
// URLs) and every field that must parse (times, states, commit ids) passes the record type's
// one constructor (NewCommit, NewIssue, NewPR) before it may reach a message, a title, a sort,
// a cursor or a warning. Each constructor fills its result with a keyed literal naming every
// field, and a test gives every raw field a credential-shaped value and counts the fields, so a
// new field cannot slip past the masking.

// RawCommit is one commit as git log prints it.
type RawCommit struct {
	// SHA is the commit id (%H).
	SHA string
	// Parents are the parent ids, space-separated (%P).
	Parents string
	// AuthoredAt is the author date in strict ISO 8601 (%aI).
	AuthoredAt string
	// CommittedAt is the committer date in strict ISO 8601 (%cI).
	CommittedAt string
	// AuthorName is the author's name (%an).
	AuthorName string
	// AuthorEmail is the author's email (%ae).
	AuthorEmail string
	// Subject is the first line of the message (%s).
	Subject string
	// Body is the rest of the message (%b).
	Body string
}

// RawIssue is one issue as gh issue list --json prints it.
type RawIssue struct {
	// Number is the issue's number in its repository.
	Number int
	// Title, Body, Author (the login), State, StateReason, the three times, URL and Labels
	// (their names) are gh's fields of the same names.
	Title string
	// Body is the issue's text.
	Body string
	// Author is the author's login.
	Author string
	// State is OPEN or CLOSED.
	State string
	// StateReason is empty, COMPLETED, NOT_PLANNED, REOPENED or DUPLICATE.
	StateReason string
	// CreatedAt is when the issue was opened (RFC 3339).
	CreatedAt string
	// UpdatedAt is when it last changed (RFC 3339); paging and the cursor follow it.
	UpdatedAt string
	// ClosedAt is when it was closed (RFC 3339); empty while open.
	ClosedAt string
	// URL is the issue's web address.
	URL string
	// Labels are the names of its labels.
	Labels []string
}

// RawPR is one pull request as gh pr list --json prints it.
type RawPR struct {
	// Number is the pull request's number in its repository.
	Number int
	// Title is its title.
	Title string
	// Body is its text.
	Body string
	// Author is the author's login.
	Author string
	// State is OPEN, CLOSED or MERGED.
	State string
	// CreatedAt is when it was opened (RFC 3339).
	CreatedAt string
	// UpdatedAt is when it last changed (RFC 3339).
	UpdatedAt string
	// ClosedAt is when it was closed (RFC 3339); empty while open.
	ClosedAt string
	// MergedAt is when it was merged (RFC 3339); empty unless merged.
	MergedAt string
	// HeadRef is the branch it merges from.
	HeadRef string
	// BaseRef is the branch it merges into.
	BaseRef string
	// MergeCommit is the id of the commit it was merged as (gh's mergeCommit.oid).
	MergeCommit string
	// URL is its web address.
	URL string
	// Labels are the names of its labels.
	Labels []string
}

// Commit is a commit past its masking boundary.
type Commit struct {
	// SHA is the commit id: 40 or 64 lower-case hex characters.
	SHA string
	// Parents are the parent ids, each a valid commit id.
	Parents []string
	// AuthoredAt and CommittedAt are in UTC; zero when the field was dropped.
	AuthoredAt time.Time
	// CommittedAt is the committer date; zero when dropped.
	CommittedAt time.Time
	// Author and Email are masked one-line text.
	Author string
	// Email is the author's email, masked.
	Email string
	// Subject is the masked first line; Body the masked rest.
	Subject string
	// Body is the masked rest of the message.
	Body string
}

// Short is the commit's abbreviated id, for titles and warnings.
func (c Commit) Short() string { return c.SHA[:7] }

// IssueState is the state of an issue or pull request.
type IssueState string

// The states of spec 08 (gh prints them upper case).
const (
	// StateOpen is open.
	StateOpen IssueState = "open"
	// StateClosed is closed (not merged).
	StateClosed IssueState = "closed"
	// StateMerged is a merged pull request.
	StateMerged IssueState = "merged"
)

// Issue is an issue past its masking boundary.
type Issue struct {
	// Number is the issue's number (at least 1).
	Number int
	// Title, Body, Author, URL and Labels are masked.
	Title string
	// Body is the masked text.
	Body string
	// Author is the masked login.
	Author string
	// State is open or closed; empty when the field was dropped.
	State IssueState
	// StateReason is completed, not_planned, reopened or duplicate; empty for none.
	StateReason string
	// CreatedAt, UpdatedAt and ClosedAt are in UTC; zero when absent or dropped.
	CreatedAt time.Time
	// UpdatedAt orders the records and moves the cursor.
	UpdatedAt time.Time
	// ClosedAt is when it was closed.
	ClosedAt time.Time
	// URL is the masked web address.
	URL string
	// Labels are the masked label names.
	Labels []string
}

// PR is a pull request past its masking boundary.
type PR struct {
	// Number is the pull request's number (at least 1).
	Number int
	// Title, Body, Author, HeadRef, BaseRef, URL and Labels are masked.
	Title string
	// Body is the masked text.
	Body string
	// Author is the masked login.
	Author string
	// State is open, closed or merged; empty when the field was dropped.
	State IssueState
	// CreatedAt, UpdatedAt, ClosedAt and MergedAt are in UTC; zero when absent or dropped.
	CreatedAt time.Time
	// UpdatedAt orders the records and moves the cursor.
	UpdatedAt time.Time
	// ClosedAt is when it was closed.
	ClosedAt time.Time
	// MergedAt is when it was merged.
	MergedAt time.Time
	// HeadRef is the masked source branch.
	HeadRef string
	// BaseRef is the masked target branch.
	BaseRef string
	// MergeCommit is the commit id it was merged as; empty when unknown or dropped.
	MergeCommit string
	// URL is the masked web address.
	URL string
	// Labels are the masked label names.
	Labels []string
}

// ErrUnreadable is the error of a constructor for a record that cannot be keyed: a commit
// without a valid id, an issue or pull request without a positive number. The record is
// reported as rejected; the error names the field, never its value.
var ErrUnreadable = errors.New("record cannot be read")

// issueStateReasons are the governed values of gh's stateReason, in gh's spelling.
var issueStateReasons = map[string]string{
	"COMPLETED":   "completed",
	"NOT_PLANNED": "not_planned",
	"REOPENED":    "reopened",
	"DUPLICATE":   "duplicate",
}

// fields collects the warnings of one record: each names the record and a field, never a value.
type fields struct {
	record   string
	warnings []string
}

func (f *fields) drop(field, why string) {
	f.warnings = append(f.warnings, fmt.Sprintf("%s: field %s dropped: %s", f.record, field, why))
}

// time parses an RFC 3339 field: empty is absent without a warning, anything else that does
// not parse is dropped with one.
func (f *fields) time(field, raw string) time.Time {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		f.drop(field, "not an RFC 3339 time")
		return time.Time{}
	}
	return t.UTC()
}

// NewCommit masks and checks a raw commit. A commit without a valid id is ErrUnreadable;
// invalid parents and dates are dropped with a warning.
func NewCommit(raw RawCommit, m Masker) (Commit, []string, error) {
	sha := strings.TrimSpace(raw.SHA)
	if !ValidSHA(sha) {
		return Commit{}, nil, fmt.Errorf("commit: field sha: %w", ErrUnreadable)
	}
	f := fields{record: "commit " + sha[:7]}
	var parents []string
	for p := range strings.FieldsSeq(raw.Parents) {
		if !ValidSHA(p) {
			f.drop("parents", "not a commit id")
			parents = nil
			break
		}
		parents = append(parents, p)
	}
	c := Commit{
		SHA:         sha,
		Parents:     parents,
		AuthoredAt:  f.time("author_date", raw.AuthoredAt),
		CommittedAt: f.time("committer_date", raw.CommittedAt),
		Author:      m.CleanLine(raw.AuthorName),
		Email:       m.CleanLine(raw.AuthorEmail),
		Subject:     m.CleanLine(raw.Subject),
		Body:        strings.TrimSpace(m.CleanText(raw.Body)),
	}
	return c, f.warnings, nil
}

// NewIssue masks and checks a raw issue. An issue without a positive number is ErrUnreadable;
// an unparsable time, an unknown state or state reason is dropped with a warning.
func NewIssue(raw RawIssue, m Masker) (Issue, []string, error) {
	if raw.Number < 1 {
		return Issue{}, nil, fmt.Errorf("issue: field number: %w", ErrUnreadable)
	}
	f := fields{record: fmt.Sprintf("issue #%d", raw.Number)}
	var state IssueState
	switch strings.ToUpper(strings.TrimSpace(raw.State)) {
	case "OPEN":
		state = StateOpen
	case "CLOSED":
		state = StateClosed
	case "":
	default:
		f.drop("state", "not OPEN or CLOSED")
	}
	reason := strings.ToUpper(strings.TrimSpace(raw.StateReason))
	canonical, ok := issueStateReasons[reason]
	if !ok && reason != "" {
		f.drop("stateReason", "not a governed value")
	}
	is := Issue{
		Number:      raw.Number,
		Title:       m.CleanLine(raw.Title),
		Body:        strings.TrimSpace(m.CleanText(raw.Body)),
		Author:      m.CleanLine(raw.Author),
		State:       state,
		StateReason: canonical,
		CreatedAt:   f.time("createdAt", raw.CreatedAt),
		UpdatedAt:   f.time("updatedAt", raw.UpdatedAt),
		ClosedAt:    f.time("closedAt", raw.ClosedAt),
		URL:         m.CleanLine(raw.URL),
		Labels:      cleanLabels(raw.Labels, m),
	}
	return is, f.warnings, nil
}

// NewPR masks and checks a raw pull request, like NewIssue; a merge commit that is not a valid
// commit id is dropped with a warning.
func NewPR(raw RawPR, m Masker) (PR, []string, error) {
	if raw.Number < 1 {
		return PR{}, nil, fmt.Errorf("pull request: field number: %w", ErrUnreadable)
	}
	f := fields{record: fmt.Sprintf("pull request #%d", raw.Number)}
	var state IssueState
	switch strings.ToUpper(strings.TrimSpace(raw.State)) {
	case "OPEN":
		state = StateOpen
	case "CLOSED":
		state = StateClosed
	case "MERGED":
		state = StateMerged
	case "":
	default:
		f.drop("state", "not OPEN, CLOSED or MERGED")
	}
	merge := strings.TrimSpace(raw.MergeCommit)
	if merge != "" && !ValidSHA(merge) {
		f.drop("mergeCommit", "not a commit id")
		merge = ""
	}
	pr := PR{
		Number:      raw.Number,
		Title:       m.CleanLine(raw.Title),
		Body:        strings.TrimSpace(m.CleanText(raw.Body)),
		Author:      m.CleanLine(raw.Author),
		State:       state,
		CreatedAt:   f.time("createdAt", raw.CreatedAt),
		UpdatedAt:   f.time("updatedAt", raw.UpdatedAt),
		ClosedAt:    f.time("closedAt", raw.ClosedAt),
		MergedAt:    f.time("mergedAt", raw.MergedAt),
		HeadRef:     m.CleanLine(raw.HeadRef),
		BaseRef:     m.CleanLine(raw.BaseRef),
		MergeCommit: merge,
		URL:         m.CleanLine(raw.URL),
		Labels:      cleanLabels(raw.Labels, m),
	}
	return pr, f.warnings, nil
}

// cleanLabels masks label names and leaves out the empty ones.
func cleanLabels(raw []string, m Masker) []string {
	var out []string
	for _, l := range raw {
		if l = m.CleanLine(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ValidSHA reports whether s is a full commit id: 40 (SHA-1) or 64 (SHA-256) lower-case hex
// characters.
func ValidSHA(s string) bool {
	return (len(s) == 40 || len(s) == 64) && isLowerHex(s)
}
