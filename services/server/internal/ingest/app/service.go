package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

// The ingester's app principal, created on first use.
const (
	// PrincipalHandle is the handle of the app principal every pass acts as.
	PrincipalHandle = "git-ingest"
	// PrincipalName is its display name.
	PrincipalName = "Git ingest"
)

// PrincipalScopes are the scopes the app principal is created with: messages:write to create threads
// and post, and messages:read because an app sees a channel only with a scope that covers
// reading it (spec 04), and chat refuses a write into a channel its writer cannot see.
func PrincipalScopes() []string {
	return []string{identity.ScopeMessagesRead, identity.ScopeMessagesWrite}
}

// Errors of Run besides those of its ports.
var (
	// ErrChannelArchived: a pass writes into no archived channel (a problem.ErrConflict).
	ErrChannelArchived = problem.New(problem.ErrConflict, "The channel is archived.")
	// ErrAppPrincipal: the handle git-ingest belongs to a principal that is not a usable app
	// (another kind, a deactivated app, or an app without the scopes); rename it or fix its
	// scopes (a problem.ErrConflict).
	ErrAppPrincipal = problem.New(problem.ErrConflict, "The handle @"+PrincipalHandle+" belongs to a principal the ingester cannot act as.")
)

// Deps are the ports a Service uses; PRs and Issues may be nil (no source: the section is
// skipped with a warning), everything else is required.
type Deps struct {
	// Store keeps the cursors and records.
	Store Store
	// Tx runs each record's writes in one transaction.
	Tx Transactor
	// Channels, Threads and Messages are chat's use cases.
	Channels Channels
	// Threads starts threads.
	Threads Threads
	// Messages posts messages.
	Messages Messages
	// Directory, Principals and Grants set the app principal up.
	Directory Directory
	// Principals creates the app principal.
	Principals Principals
	// Grants gives it its member grant.
	Grants Grants
	// Git reads the clone.
	Git Git
	// PRs reads pull requests; nil for none.
	PRs PRSource
	// Issues reads issues; nil for none.
	Issues IssueSource
	// Clock stamps records and cursors and times the pass.
	Clock clock.Clock
	// Logger gets one line per pass with its counts (never a record's text).
	Logger *slog.Logger
	// Limits bound the titles and messages a pass writes (LimitsFrom; CheckLimits).
	Limits domain.Limits
}

// Service runs passes; it implements ingest.Ingester.
type Service struct {
	d Deps
}

// New returns a Service, or an error naming the first missing dependency.
func New(d Deps) (*Service, error) {
	for name, missing := range map[string]bool{
		"Store": d.Store == nil, "Tx": d.Tx == nil, "Channels": d.Channels == nil, "Threads": d.Threads == nil,
		"Messages": d.Messages == nil, "Directory": d.Directory == nil, "Principals": d.Principals == nil,
		"Grants": d.Grants == nil, "Git": d.Git == nil, "Clock": d.Clock == nil, "Logger": d.Logger == nil,
	} {
		if missing {
			return nil, fmt.Errorf("ingest: New: %s is nil", name)
		}
	}
	if err := CheckLimits(d.Limits); err != nil {
		return nil, fmt.Errorf("ingest: New: %w", err)
	}
	return &Service{d: d}, nil
}

// Run implements ingest.Ingester: it checks the input and the channel, reads the clone,
// refuses a repository ingested into another channel, sets the app principal up, and walks
// pull requests, issues and commits, then posts the replies of references written later in
// the pass.
func (s *Service) Run(ctx context.Context, p ingest.Pass) (ingest.Report, error) {
	start := s.d.Clock.Now()
	rep := ingest.Report{ChannelID: p.ChannelID, Warnings: []string{}, Budget: ingest.BudgetReport{MaxItems: max(p.MaxItems, 0)}}
	var fields []problem.FieldError
	if p.ChannelID == uuid.Nil {
		fields = append(fields, problem.FieldError{Field: "channel_id", Message: "is required"})
	}
	if p.MaxItems < 0 {
		fields = append(fields, problem.FieldError{Field: "max_items", Message: "must be 0 (no bound) or more"})
	}
	if len(fields) > 0 {
		return rep, fmt.Errorf("ingest: %w", problem.Validation(fields...))
	}
	ch, err := s.d.Channels.Get(ctx, p.ChannelID)
	if err != nil {
		return rep, fmt.Errorf("ingest: channel %s: %w", p.ChannelID, err)
	}
	switch {
	case ch.Kind == chat.ChannelDM:
		return rep, fmt.Errorf("ingest: channel %s: %w", p.ChannelID,
			problem.Validation(problem.FieldError{Field: "channel_id", Message: "must be a channel of a space, not a direct message"}))
	case !ch.ArchivedAt.IsZero():
		return rep, fmt.Errorf("ingest: channel %s: %w", p.ChannelID, ErrChannelArchived)
	}
	raw, err := s.d.Git.Repository(ctx)
	if err != nil {
		return rep, fmt.Errorf("ingest: read the repository: %w", err)
	}
	repo := domain.NewRepository(raw, s.d.Limits.Mask)
	rep.Repository, rep.Branch = repo.Name, repo.Branch
	cursors, err := s.d.Store.Cursors(ctx, repo.Name)
	if err != nil {
		return rep, fmt.Errorf("ingest: cursors: %w", err)
	}
	for _, c := range cursors {
		if c.ChannelID != p.ChannelID {
			return rep, fmt.Errorf("ingest: %s is ingested into channel %s: %w", repo.Name, c.ChannelID, ingest.ErrOtherChannel)
		}
	}
	who, err := s.principal(ctx, p.ChannelID)
	if err != nil {
		return rep, fmt.Errorf("ingest: app principal: %w", err)
	}
	ps := newPass(s, p, repo, cursors, &rep)
	err = ps.run(actor.With(ctx, who))
	rep.Budget.Used = ps.budget.Used()
	rep.Done = rep.PRs.Complete && rep.Issues.Complete && rep.Commits.Complete
	rep.ElapsedMS = s.d.Clock.Now().Sub(start).Milliseconds()
	s.d.Logger.InfoContext(ctx, "ingest pass",
		"repository", rep.Repository, "channel_id", p.ChannelID.String(), "done", rep.Done,
		"created", rep.PRs.Created+rep.Issues.Created+rep.Commits.Created,
		"skipped", rep.PRs.Skipped+rep.Issues.Skipped+rep.Commits.Skipped,
		"failed", rep.Failed(), "budget_used", rep.Budget.Used, "warnings", len(rep.Warnings), "elapsed_ms", rep.ElapsedMS)
	if err != nil {
		return rep, fmt.Errorf("ingest: %w", err)
	}
	return rep, nil
}

// principal finds or creates the app principal and its member grant on the channel, and
// returns the actor a pass acts as. The grant is made by the app itself: the operator who runs
// the command holds the database, and grant.created names who acted.
func (s *Service) principal(ctx context.Context, channelID uuid.UUID) (actor.Actor, error) {
	p, err := s.appPrincipal(ctx)
	if err != nil {
		return actor.Actor{}, err
	}
	who := actor.Actor{PrincipalID: p.ID, Kind: actor.KindApp, Scopes: p.Scopes}
	grants, err := s.d.Grants.List(ctx, p.ID)
	if err != nil {
		return actor.Actor{}, fmt.Errorf("grants: %w", err)
	}
	for _, g := range grants {
		if g.ResourceKind == kernel.ResourceChannel && g.ResourceID == channelID {
			if !g.Role.AtLeast(authz.RoleMember) {
				return actor.Actor{}, fmt.Errorf("the app @%s holds the role %s on the channel, it needs member: %w", PrincipalHandle, g.Role, problem.ErrConflict)
			}
			return who, nil
		}
	}
	_, err = s.d.Grants.Grant(actor.With(ctx, who), authz.GrantInput{
		PrincipalID: p.ID, ResourceKind: kernel.ResourceChannel, ResourceID: channelID, Role: authz.RoleMember,
	})
	if err != nil && !errors.Is(err, problem.ErrConflict) {
		return actor.Actor{}, fmt.Errorf("member grant: %w", err)
	}
	return who, nil
}

// appPrincipal returns the app principal, created on first use (also by a concurrent pass).
func (s *Service) appPrincipal(ctx context.Context) (identity.Principal, error) {
	for range 2 {
		refs, err := s.d.Directory.ByHandles(ctx, []string{PrincipalHandle})
		if err != nil {
			return identity.Principal{}, fmt.Errorf("look up @%s: %w", PrincipalHandle, err)
		}
		if ref, ok := refs[PrincipalHandle]; ok {
			if ref.Kind != actor.KindApp {
				return identity.Principal{}, fmt.Errorf("it is a %s: %w", ref.Kind, ErrAppPrincipal)
			}
			p, err := s.d.Principals.Get(ctx, ref.ID)
			if err != nil {
				return identity.Principal{}, fmt.Errorf("read @%s: %w", PrincipalHandle, err)
			}
			for _, scope := range PrincipalScopes() {
				if !slices.Contains(p.Scopes, scope) {
					return identity.Principal{}, fmt.Errorf("it lacks the scope %s: %w", scope, ErrAppPrincipal)
				}
			}
			return p, nil
		}
		p, err := s.d.Principals.CreateApp(ctx, identity.AppInput{DisplayName: PrincipalName, Handle: PrincipalHandle, Scopes: PrincipalScopes()})
		if errors.Is(err, identity.ErrHandleTaken) {
			continue // created meanwhile, or taken by a deactivated principal: look again
		}
		if err != nil {
			return identity.Principal{}, fmt.Errorf("create @%s: %w", PrincipalHandle, err)
		}
		return p, nil
	}
	return identity.Principal{}, fmt.Errorf("the handle is taken by a deactivated principal: %w", ErrAppPrincipal)
}
