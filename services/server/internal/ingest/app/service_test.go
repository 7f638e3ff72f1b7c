package app_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"bothy.example.com/server/internal/ingest/ingesttest"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestNewNamesTheMissingDependency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		mod  func(*app.Deps)
	}{
		{"Store", func(d *app.Deps) { d.Store = nil }},
		{"Git", func(d *app.Deps) { d.Git = nil }},
		{"Logger", func(d *app.Deps) { d.Logger = nil }},
	} {
		id := fakeIdentity{w: e.w}
		d := app.Deps{Store: e.store, Tx: fakeTx{w: e.w}, Channels: e.chat, Threads: e.chat, Messages: e.chat, Directory: id,
			Principals: id, Grants: fakeGrants{w: e.w}, Git: e.git, Clock: e.clock, Logger: slog.New(slog.DiscardHandler), Limits: testLimits}
		if _, err := app.New(d); err != nil {
			t.Fatalf("New with every dependency: %v", err)
		}
		tc.mod(&d)
		if _, err := app.New(d); err == nil || !strings.Contains(err.Error(), tc.name+" is nil") {
			t.Errorf("New without %s = %v", tc.name, err)
		}
	}
}

func TestRunRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env) ingest.Pass
		check func(error) bool
		want  string
	}{
		{"no channel", func(_ *env) ingest.Pass { return ingest.Pass{MaxItems: -1} },
			func(err error) bool { return errors.Is(err, problem.ErrValidation) }, "channel_id"},
		{"a negative budget", func(e *env) ingest.Pass { return ingest.Pass{ChannelID: e.channel, MaxItems: -1} },
			func(err error) bool { return errors.Is(err, problem.ErrValidation) }, "max_items"},
		{"an unknown channel", func(_ *env) ingest.Pass { return ingest.Pass{ChannelID: ids.New()} },
			func(err error) bool { return errors.Is(err, problem.ErrNotFound) }, "channel"},
		{"a direct message", func(e *env) ingest.Pass {
			ch := e.w.channels[e.channel]
			ch.Kind = chat.ChannelDM
			e.w.channels[e.channel] = ch
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, problem.ErrValidation) }, "direct message"},
		{"an archived channel", func(e *env) ingest.Pass {
			ch := e.w.channels[e.channel]
			ch.ArchivedAt = epoch
			e.w.channels[e.channel] = ch
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, app.ErrChannelArchived) }, "archived"},
		{"a repository of another channel", func(e *env) ingest.Pass {
			e.w.cursors["alex/bothy/commits"] = domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionCommits, ChannelID: ids.New(), Position: sha(1)}
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool {
			return errors.Is(err, ingest.ErrOtherChannel) && errors.Is(err, problem.ErrConflict)
		}, "alex/bothy is ingested into channel"},
		{"an unreadable clone", func(e *env) ingest.Pass {
			e.git.failed = &domain.GitError{Phase: "rev-parse", Stderr: "fatal: not a git repository", Err: errors.New("exit status 128"), Mask: ingesttest.Masker()}
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool {
			var g *domain.GitError
			return errors.As(err, &g) && g.Class() == domain.GitFailureNotRepository
		}, "read the repository"},
		{"the handle taken by a person", func(e *env) ingest.Pass {
			id := ids.New()
			e.w.principals[id] = identity.Principal{ID: id, Kind: actor.KindPerson, Handle: app.PrincipalHandle}
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, app.ErrAppPrincipal) }, "it is a person"},
		{"an app without the scopes", func(e *env) ingest.Pass {
			id := ids.New()
			e.w.principals[id] = identity.Principal{ID: id, Kind: actor.KindApp, Handle: app.PrincipalHandle, Scopes: []string{identity.ScopeMessagesWrite}}
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, app.ErrAppPrincipal) }, "lacks the scope messages:read"},
		{"a deactivated app", func(e *env) ingest.Pass {
			id := ids.New()
			e.w.principals[id] = identity.Principal{ID: id, Kind: actor.KindApp, Handle: app.PrincipalHandle, DeactivatedAt: epoch}
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, app.ErrAppPrincipal) }, "deactivated"},
		{"a viewer grant", func(e *env) ingest.Pass {
			id := ids.New()
			e.w.principals[id] = identity.Principal{ID: id, Kind: actor.KindApp, Handle: app.PrincipalHandle, Scopes: app.PrincipalScopes()}
			e.w.grants = append(e.w.grants, authz.Grant{PrincipalID: id, ResourceKind: kernel.ResourceChannel, ResourceID: e.channel, Role: authz.RoleViewer})
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return errors.Is(err, problem.ErrConflict) }, "holds the role viewer"},
		{"a failing store", func(e *env) ingest.Pass {
			e.w.failStoreOps["Cursors"] = errors.New("store down")
			return ingest.Pass{ChannelID: e.channel}
		}, func(err error) bool { return err != nil }, "cursors: store down"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			history(e)
			p := tc.setup(e)
			_, err := e.service().Run(t.Context(), p)
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want an error mentioning %q", err, tc.want)
			}
			if e.writes() != 0 || len(e.w.records) != 0 {
				t.Fatalf("a refused pass wrote %d messages and %d records", e.writes(), len(e.w.records))
			}
		})
	}
}

func TestExistingAppPrincipalIsReused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	id := ids.New()
	e.w.principals[id] = identity.Principal{ID: id, Kind: actor.KindApp, Handle: app.PrincipalHandle, Scopes: app.PrincipalScopes()}
	e.w.grants = append(e.w.grants, authz.Grant{PrincipalID: id, ResourceKind: kernel.ResourceChannel, ResourceID: e.channel, Role: authz.RoleAdmin})
	e.run(0)
	if len(e.w.principals) != 1 || len(e.w.grants) != 1 {
		t.Fatalf("principals %d, grants %d: the existing app should be reused", len(e.w.principals), len(e.w.grants))
	}
}

func TestCommitCursorNotInTheRepository(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	e.run(0)
	// History rewritten: the cursor's commit is gone; the walk starts over and skips.
	e.w.cursors["alex/bothy/commits"] = domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionCommits, ChannelID: e.channel, Position: sha(99)}
	rep := e.run(0)
	if rep.Commits.Skipped != 4 || rep.Commits.Created != 0 || rep.Commits.Cursor != sha(4) || !rep.Done {
		t.Fatalf("pass = %+v", rep)
	}
	if got := e.git.logs[len(e.git.logs)-2:]; got[0] != sha(99) || got[1] != "" {
		t.Fatalf("git log calls = %q", got)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "commits: the cursor's commit abc0099 is not in the repository") {
		t.Fatalf("warnings = %q", rep.Warnings)
	}
	// A cursor that is no commit id or no time is ignored with a warning.
	e.w.cursors["alex/bothy/commits"] = domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionCommits, ChannelID: e.channel, Position: "junk"}
	e.w.cursors["alex/bothy/prs"] = domain.Cursor{Repository: "alex/bothy", Section: ingest.SectionPRs, ChannelID: e.channel, Position: "junk"}
	rep = e.run(0)
	if rep.Commits.Skipped != 4 || rep.PRs.Skipped != 2 || rep.Commits.Cursor != sha(4) || !rep.Done {
		t.Fatalf("pass = %+v", rep)
	}
}

func TestStoreFailureStopsThePassAndKeepsProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	e.w.failStoreOps["MergedPullRequests"] = errors.New("store down")
	rep, err := e.service().Run(t.Context(), ingest.Pass{ChannelID: e.channel})
	if err == nil || !strings.Contains(err.Error(), "commits: look up merges: store down") {
		t.Fatalf("Run = %v", err)
	}
	if rep.PRs.Created != 2 || e.cursor(ingest.SectionPRs) == "" || e.cursor(ingest.SectionIssues) == "" {
		t.Fatalf("report %+v, cursors %q %q", rep, e.cursor(ingest.SectionPRs), e.cursor(ingest.SectionIssues))
	}
	// A cursor that cannot be saved fails the pass.
	e2 := newEnv(t)
	history(e2)
	e2.w.failStoreOps["SaveCursor"] = errors.New("disk full")
	if _, err := e2.service().Run(t.Context(), ingest.Pass{ChannelID: e2.channel}); err == nil || !strings.Contains(err.Error(), "prs: save cursor: disk full") {
		t.Fatalf("Run = %v", err)
	}
	// So does a source that fails.
	e3 := newEnv(t)
	history(e3)
	e3.issues.failed = errors.New("gh: rate limited")
	if _, err := e3.service().Run(t.Context(), ingest.Pass{ChannelID: e3.channel}); err == nil || !strings.Contains(err.Error(), "issues: gh: rate limited") {
		t.Fatalf("Run = %v", err)
	}
	for _, op := range []string{"Records", "RecordsWithPrefix"} {
		e4 := newEnv(t)
		e4.git.commits = []domain.RawCommit{{SHA: sha(1), Subject: "Fixes abc0009"}}
		e4.w.failStoreOps[op] = errors.New("store down")
		if _, err := e4.service().Run(t.Context(), ingest.Pass{ChannelID: e4.channel}); err == nil || !strings.Contains(err.Error(), "store down") {
			t.Fatalf("Run with %s failing = %v", op, err)
		}
	}
}

func TestCancelledPassKeepsItsCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	history(e)
	ctx, cancel := context.WithCancel(t.Context())
	rep, err := e.service().Run(ctx, ingest.Pass{ChannelID: e.channel, Progress: func(p ingest.Progress) {
		if p.Section == ingest.SectionCommits && p.Done == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if rep.Commits.Created != 2 || e.cursor(ingest.SectionCommits) != sha(2) || rep.Done {
		t.Fatalf("report %+v, cursor %q", rep, e.cursor(ingest.SectionCommits))
	}
	if rep.ElapsedMS != 0 {
		t.Fatalf("elapsed on a fake clock = %d", rep.ElapsedMS)
	}
}

// TestNewRefusesEmptyLimits: a limit below 1 would leave every title, body or file list
// empty, so the key is refused at start, named.
func TestNewRefusesEmptyLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		limits domain.Limits
	}{
		{"the title limit", domain.Limits{TitleRunes: 0, BodyBytes: 1, Files: 1}},
		{"ingest.max_body_bytes", domain.Limits{TitleRunes: 1, BodyBytes: 0, Files: 1}},
		{"ingest.max_listed_files", domain.Limits{TitleRunes: 1, BodyBytes: 1, Files: 0}},
	} {
		id := fakeIdentity{w: e.w}
		d := app.Deps{Store: e.store, Tx: fakeTx{w: e.w}, Channels: e.chat, Threads: e.chat, Messages: e.chat, Directory: id,
			Principals: id, Grants: fakeGrants{w: e.w}, Git: e.git, Clock: e.clock, Logger: slog.New(slog.DiscardHandler), Limits: tc.limits}
		if _, err := app.New(d); err == nil || !strings.Contains(err.Error(), tc.name+" is 0") {
			t.Errorf("New with %+v = %v, want %s refused", tc.limits, err, tc.name)
		}
	}
}
