// Package app is the ingester's use case: one pass over a repository (Service.Run), with the
// outgoing ports it needs declared here, from its side. The composition root binds the chat,
// identity and authz ports to those modules' use cases, Store to the ingest schema, Git to the
// clone and the sources to gh or JSON files.
package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/domain"
)

// Store keeps the ingester's own rows (schema ingest): the cursors and the records it wrote.
// Every method joins the transaction of ctx when there is one.
type Store interface {
	// Cursors returns the cursors of the repository, one per section that has one.
	Cursors(ctx context.Context, repository string) ([]domain.Cursor, error)
	// SaveCursor writes the cursor of its repository and section, replacing the one there.
	SaveCursor(ctx context.Context, c domain.Cursor) error
	// Records returns the records with the given natural keys, by key; a key without a
	// record is absent.
	Records(ctx context.Context, keys []string) (map[string]domain.Record, error)
	// RecordsWithPrefix returns at most limit records whose key starts with prefix, in key
	// order (abbreviated commit ids).
	RecordsWithPrefix(ctx context.Context, prefix string, limit int) ([]domain.Record, error)
	// MergedPullRequests returns the pull request records merged as the given commits, by
	// commit id.
	MergedPullRequests(ctx context.Context, shas []string) (map[string]domain.Record, error)
	// InsertRecords stores records the pass wrote; a key that exists is an error, which rolls
	// the chat write of the same transaction back.
	InsertRecords(ctx context.Context, records []domain.Record) error
}

// Transactor runs a record's chat write and its record rows in one transaction, so a record
// row exists exactly when its message does (*tx.Runner; the chat use cases join it).
type Transactor interface {
	// RunInTx runs fn and its commit-phase hooks and commits; any error rolls everything back.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Channels is the part of chat.Channels the pass uses to check its channel.
type Channels interface {
	// Get returns the channel without authorizing; problem.ErrNotFound when there is none.
	Get(ctx context.Context, id uuid.UUID) (chat.Channel, error)
}

// Threads is the part of chat.Threads the pass writes pull requests, issues and branch threads
// with.
type Threads interface {
	// Create starts a thread with its first message as the actor in ctx; chat.ErrDuplicateKey
	// when the first message's external key exists.
	Create(ctx context.Context, in chat.ThreadInput) (chat.Thread, chat.Message, error)
}

// Messages is the part of chat.Messages the pass writes commits and reference replies with.
type Messages interface {
	// Post adds a message to a thread as the actor in ctx; chat.ErrDuplicateKey when its
	// external key exists.
	Post(ctx context.Context, in chat.MessageInput) (chat.Message, error)
}

// Directory finds the ingester's app principal by its handle.
type Directory interface {
	// ByHandles returns the active principals with the handles, keyed by lower-case handle.
	ByHandles(ctx context.Context, handles []string) (map[string]identity.PrincipalRef, error)
}

// Principals creates the ingester's app principal on first use and reads its scopes.
type Principals interface {
	// CreateApp creates an app with its scopes; identity.ErrHandleTaken when the handle is
	// taken.
	CreateApp(ctx context.Context, in identity.AppInput) (identity.Principal, error)
	// Get returns the principal with id.
	Get(ctx context.Context, id uuid.UUID) (identity.Principal, error)
}

// Grants gives the app principal its member grant on the channel on first use.
type Grants interface {
	// Grant makes the grant as the actor in ctx (grant.created is appended);
	// problem.ErrConflict when the principal holds a grant on the resource already.
	Grant(ctx context.Context, in authz.GrantInput) (authz.Grant, error)
	// List returns the grants of the principal.
	List(ctx context.Context, principalID uuid.UUID) ([]authz.Grant, error)
}

// Git reads the clone. Its errors for failed git commands are *domain.GitError, which the
// pass classifies with domain.ClassifyGitFailure.
type Git interface {
	// Repository describes the clone: its origin URL, work tree, HEAD's branch and whether
	// HEAD has a commit.
	Repository(ctx context.Context) (domain.RawRepository, error)
	// Log returns the commits of HEAD that since does not reach (all of HEAD's history when
	// since is ""), parents before children, oldest first, raw. The errors of the records git
	// printed but the parser could not read are returned beside them.
	Log(ctx context.Context, since string) ([]domain.RawCommit, []error, error)
	// TouchedFiles returns the files each commit of the same range touched, by commit id,
	// from a separate git log --name-only pass.
	TouchedFiles(ctx context.Context, since string) (map[string][]string, error)
}

// PRSource reads pull requests.
type PRSource interface {
	// Name is the source's name in the report: gh or file.
	Name() string
	// PullRequests returns one page of the pull requests updated at or after floor (all of
	// them for the zero floor), as the source orders them.
	PullRequests(ctx context.Context, floor time.Time) (domain.SourcePage[domain.RawPR], error)
}

// IssueSource reads issues.
type IssueSource interface {
	// Name is the source's name in the report: gh or file.
	Name() string
	// Issues returns one page of the issues updated at or after floor, like PullRequests.
	Issues(ctx context.Context, floor time.Time) (domain.SourcePage[domain.RawIssue], error)
}

var _ ingest.Ingester = (*Service)(nil)
