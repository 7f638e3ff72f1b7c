package wire

import (
	"context"
	"fmt"
	"os"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/ingest"
	ingestgh "bothy.example.com/server/internal/ingest/adapters/gh"
	gitadapter "bothy.example.com/server/internal/ingest/adapters/git"
	ingestpg "bothy.example.com/server/internal/ingest/adapters/postgres"
	ingestapp "bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/kernel/problem"
)

// What bothy ingest git does, in the words of the command: the ingest module's pass bound to
// a clone, its sources and the chat, identity and authz use cases of this App, so the command
// needs nothing but wire. The pass writes through chat as the app principal @git-ingest, so
// nothing here authorizes beyond what chat does (ADR 0017).

// IngestReport is the report of a pass, printed as JSON by bothy ingest git.
type IngestReport = ingest.Report

// IngestProgress is how far a pass has come in one section.
type IngestProgress = ingest.Progress

// IngestGHRunner runs the gh command; tests and the benchmark pass a fake one.
type IngestGHRunner = ingestgh.Runner

// IngestGitOptions are the inputs of one pass of bothy ingest git.
type IngestGitOptions struct {
	// Repo is the path of the local clone (--repo).
	Repo string
	// Channel is the id of the channel to write to, as the command line spells it (--channel).
	Channel string
	// PRsJSON and IssuesJSON are JSON files in gh's --json output format (--prs-json,
	// --issues-json); a section without one reads gh when it is installed and authenticated,
	// and nothing otherwise.
	PRsJSON, IssuesJSON string
	// MaxItems bounds the creation attempts (--max-items); 0 means no bound.
	MaxItems int
	// Progress, when set, is told after every record.
	Progress func(IngestProgress)
	// GH runs gh; nil means the gh on PATH.
	GH IngestGHRunner
}

// IngestGit runs one pass of bothy ingest git (spec 08) and returns its report; failed records
// are in the report, not in the error. The error is a problem.ErrValidation naming channel or
// repo for bad input, or whatever stops the pass (ingest.Ingester.Run); the report returned
// with it holds what was done before.
func (a *App) IngestGit(ctx context.Context, o IngestGitOptions) (IngestReport, error) {
	channel, err := uuid.Parse(o.Channel)
	if err != nil || channel == uuid.Nil {
		return IngestReport{}, problem.Validation(problem.FieldError{Field: "channel", Message: "must be a channel id (a UUID)"})
	}
	if st, err := os.Stat(o.Repo); err != nil || !st.IsDir() {
		return IngestReport{}, problem.Validation(problem.FieldError{Field: "repo", Message: "must be the directory of a git clone"})
	}
	git, err := gitadapter.New(o.Repo, a.ingest.limits.Mask)
	if err != nil {
		return IngestReport{}, err
	}
	prs, issues := ingestgh.Choose(ctx, ingestgh.Choice{Dir: o.Repo, PRsJSON: o.PRsJSON, IssuesJSON: o.IssuesJSON, Runner: o.GH, PageSize: a.ingest.ghPageSize, Mask: a.ingest.limits.Mask})
	svc, err := ingestapp.New(ingestapp.Deps{
		Store:      ingestpg.New(a.tx),
		Tx:         a.tx,
		Channels:   a.chat.Channels(),
		Threads:    a.chat.Threads(),
		Messages:   a.chat.Messages(),
		Directory:  a.identity,
		Principals: a.identity,
		Grants:     a.grants,
		Git:        git,
		PRs:        prs,
		Issues:     issues,
		Clock:      a.clock,
		Logger:     a.logger,
		Limits:     a.ingest.limits,
	})
	if err != nil {
		return IngestReport{}, fmt.Errorf("wire: ingest: %w", err)
	}
	return svc.Run(ctx, ingest.Pass{ChannelID: channel, MaxItems: o.MaxItems, Progress: o.Progress})
}
