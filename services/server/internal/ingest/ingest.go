// Package ingest turns a repository's history (its pull requests, issues and commits) into
// threads and messages of one channel, in one-shot passes (bothy ingest git, spec 08).
//
// The ingester owns no chat data: it writes only through the chat use cases, as an app
// principal, so authorization, events, catch-up and the gateway apply to what it writes exactly
// as to what people write (ADR 0017). It owns the schema ingest: the per-section cursors of each
// repository and the records it wrote (natural key to thread and message). This root package
// holds what the module offers: the Ingester port, the input of a pass and its report. The rules
// (natural keys, masking, references, paging, the budget, git log parsing) live in domain, the
// pass in app, the schema and the git and gh adapters under adapters; see README.md.
package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
)

// ErrOtherChannel is the error of a pass into a channel other than the one the repository was
// ingested into before (a problem.ErrConflict): natural keys are unique per instance, so one
// repository's records live in one channel.
var ErrOtherChannel = fmt.Errorf("%w: the repository is ingested into another channel", problem.ErrConflict)

// Section is one part of a pass, with a cursor of its own.
type Section string

// The sections of a pass, in the order a pass runs them: pull requests and issues first, so a
// commit can be written into the thread of the pull request that merged it.
const (
	// SectionPRs are the repository's pull requests; each becomes a thread.
	SectionPRs Section = "prs"
	// SectionIssues are the repository's issues; each becomes a thread.
	SectionIssues Section = "issues"
	// SectionCommits are the commits of the clone's HEAD; each becomes a message.
	SectionCommits Section = "commits"
)

// Sections returns the sections in the order a pass runs them.
func Sections() []Section {
	return []Section{SectionPRs, SectionIssues, SectionCommits}
}

// Valid reports whether s is one of Sections, so a cursor row with another name is refused.
func (s Section) Valid() bool {
	switch s {
	case SectionPRs, SectionIssues, SectionCommits:
		return true
	}
	return false
}

// Pass is the input of one pass. Where the records come from (the clone, gh or JSON files) is
// bound when the Ingester is built, since it is the composition root's choice.
type Pass struct {
	// ChannelID is the channel the records are written to: a channel of a space that is not
	// archived. A repository stays in the channel of its first pass.
	ChannelID uuid.UUID
	// MaxItems bounds the creation attempts of the pass (successful or failed); skips of
	// records that exist cost nothing. 0 means no bound; a negative value is refused.
	MaxItems int
	// Progress, when set, is told after every record, so a terminal can show a bar. It runs on
	// the pass's goroutine and must return quickly.
	Progress func(Progress)
}

// Progress is how far a pass has come in one section.
type Progress struct {
	// Section is the section being walked.
	Section Section
	// Done counts the records of the section handled so far (created, skipped or failed).
	Done int
	// Total counts the records of the section known so far; for pull requests and issues it
	// grows page by page.
	Total int
}

// Report is what a pass did; bothy ingest git prints it as JSON. No value in it comes from a
// record's free text: warnings name records by number or short commit id and fields by name.
type Report struct {
	// Repository is the repository's name in natural keys (owner/name, lower case).
	Repository string `json:"repository"`
	// Branch is the branch whose commits the pass walked (HEAD's).
	Branch string `json:"branch"`
	// ChannelID is the channel written to.
	ChannelID uuid.UUID `json:"channel_id"`
	// PRs, Issues and Commits report each section.
	PRs SectionReport `json:"prs"`
	// Issues reports the issues section.
	Issues SectionReport `json:"issues"`
	// Commits reports the commits section.
	Commits SectionReport `json:"commits"`
	// Budget is the bound of the pass and how much of it was used.
	Budget BudgetReport `json:"budget"`
	// References counts the references between records.
	References ReferenceReport `json:"references"`
	// Warnings say what went wrong or was dropped, one line each; [] when nothing did.
	Warnings []string `json:"warnings"`
	// Done is true only when every section was walked to its end: the remote windows proven
	// complete and no record left unattempted for want of budget. Failures do not clear it
	// (they are counted in Failed and retried by the next pass).
	Done bool `json:"done"`
	// ElapsedMS is how long the pass took, in milliseconds.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// SectionReport is what a pass did in one section.
type SectionReport struct {
	// Source is where the section's records came from: git, gh, file, or none (no source was
	// available, which a warning explains).
	Source string `json:"source"`
	// Created counts the records written.
	Created int `json:"created"`
	// Skipped counts the records whose natural key existed already (no budget used).
	Skipped int `json:"skipped"`
	// Failed counts the records whose creation failed; the section's cursor stops before the
	// first of them, so the next pass retries it.
	Failed int `json:"failed"`
	// Rejected counts the input records that could not be read at all (no number, no commit
	// id); they cannot be keyed, so they are reported and left out.
	Rejected int `json:"rejected"`
	// Complete is true when the section was walked to its end.
	Complete bool `json:"complete"`
	// Cursor is the section's cursor after the pass: an RFC 3339 time for pull requests and
	// issues, a commit id for commits; empty when there is none yet.
	Cursor string `json:"cursor"`
}

// BudgetReport is the bound of a pass and its use.
type BudgetReport struct {
	// MaxItems is the bound; 0 for none.
	MaxItems int `json:"max_items"`
	// Used counts the creation attempts.
	Used int `json:"used"`
}

// ReferenceReport counts the references (#123, owner/repo#123, commit ids) of the records
// written by a pass.
type ReferenceReport struct {
	// Inline counts the references to records that existed when the referring record was
	// written; they are listed in its message.
	Inline int `json:"inline"`
	// Later counts the references to records written later in the same pass; a reply in the
	// referring record's thread lists them.
	Later int `json:"later"`
	// Unresolved counts the references to no record of the repository (another repository,
	// a number never ingested).
	Unresolved int `json:"unresolved"`
	// Failed counts the replies that could not be posted.
	Failed int `json:"failed"`
}

// Section returns the report of section s; the zero report for a name that is no section.
func (r Report) Section(s Section) SectionReport {
	switch s {
	case SectionPRs:
		return r.PRs
	case SectionIssues:
		return r.Issues
	case SectionCommits:
		return r.Commits
	}
	return SectionReport{}
}

// Failed counts the failures of the pass: records not created and replies not posted. A
// command exits non-zero when it is above zero.
func (r Report) Failed() int {
	return r.PRs.Failed + r.Issues.Failed + r.Commits.Failed + r.References.Failed
}

// Ingester runs passes.
type Ingester interface {
	// Run runs one pass into p.ChannelID and returns its report. Failed records are in the
	// report, not in the error. The error is for what stops the pass: invalid input (a
	// problem.ErrValidation naming channel_id or max_items), a channel that is missing, archived
	// or a direct message, a repository ingested into another channel (ErrOtherChannel), a
	// clone or source that cannot be read, the database, or a cancelled ctx. The report
	// returned with an error holds what was done before it.
	Run(ctx context.Context, p Pass) (Report, error)
}
