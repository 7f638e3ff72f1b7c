package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

// Deps are what a Service needs, all required but Invocations.
type Deps struct {
	// Store keeps the chat tables.
	Store Store
	// Tx runs each change with its events in one transaction.
	Tx TxRunner
	// Appender appends the chat events in that transaction.
	Appender kernel.Appender
	// Redactor redacts every earlier event of a deleted message in that transaction.
	Redactor kernel.Redactor
	// Authorizer decides for the actor in ctx (Authorize), for the items of a listing
	// (ForActor) and whether a mentioned principal may read the channel (MayRead).
	Authorizer authz.Authorizer
	// Grants gives the participants of a new direct message their member grants, in its
	// transaction.
	Grants authz.Grants
	// Principals checks that direct-message participants exist (Refs) and resolves @handle
	// mentions (ByHandles).
	Principals identity.Directory
	// OwnReads moves an author's read state to each message they post, in its transaction.
	OwnReads OwnReads
	// Readers lists who can read a channel by their grants (listChannelMembers).
	Readers authz.Readers
	// Invocations makes the agents' invocations of each post and links a reply with an
	// invocation token, in the post's transaction; optional: nil makes none (and refuses a
	// post with a token).
	Invocations Invocations
	// Clock is the time of creation, edit, redaction and archiving.
	Clock clock.Clock
	// Config holds the message limit, the page size, the direct-message limit and the
	// reaction limit.
	Config Config
}

// Service implements the chat ports through its views: Spaces(), Channels(), Threads(),
// Messages(), Mentions() and Reactions(). It is safe for concurrent use.
type Service struct {
	store      Store
	tx         TxRunner
	appender   kernel.Appender
	redactor   kernel.Redactor
	authz      authz.Authorizer
	grants     authz.Grants
	principals identity.Directory
	ownReads   OwnReads
	readers    authz.Readers
	invoke     Invocations
	clock      clock.Clock
	cfg        Config
}

// New returns a Service over deps. It fails when a dependency is missing or the
// configuration is invalid (Config.Validate), so wiring mistakes stop the process at start.
func New(deps Deps) (*Service, error) {
	var errs []error
	for _, d := range []struct {
		missing bool
		name    string
	}{
		{deps.Store == nil, "store"},
		{deps.Tx == nil, "transaction runner"},
		{deps.Appender == nil, "appender"},
		{deps.Redactor == nil, "redactor"},
		{deps.Authorizer == nil, "authorizer"},
		{deps.Grants == nil, "grants port"},
		{deps.Principals == nil, "principal directory"},
		{deps.OwnReads == nil, "own reads port"},
		{deps.Readers == nil, "readers port"},
		{deps.Clock == nil, "clock"},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return &Service{
		store: deps.Store, tx: deps.Tx, appender: deps.Appender, redactor: deps.Redactor,
		authz: deps.Authorizer, grants: deps.Grants, principals: deps.Principals,
		ownReads: deps.OwnReads, readers: deps.Readers, invoke: deps.Invocations, clock: deps.Clock, cfg: deps.Config,
	}, nil
}

// The views of Service, one per port of the root package.
type (
	spaces    struct{ s *Service }
	channels  struct{ s *Service }
	threads   struct{ s *Service }
	messages  struct{ s *Service }
	mentions  struct{ s *Service }
	reactions struct{ s *Service }
)

var (
	_ chat.Spaces    = spaces{}
	_ chat.Channels  = channels{}
	_ chat.Threads   = threads{}
	_ chat.Messages  = messages{}
	_ chat.Mentions  = mentions{}
	_ chat.Reactions = reactions{}
)

// Spaces returns the chat.Spaces port.
func (s *Service) Spaces() chat.Spaces { return spaces{s} }

// Channels returns the chat.Channels port.
func (s *Service) Channels() chat.Channels { return channels{s} }

// Threads returns the chat.Threads port.
func (s *Service) Threads() chat.Threads { return threads{s} }

// Messages returns the chat.Messages port.
func (s *Service) Messages() chat.Messages { return messages{s} }

// Mentions returns the chat.Mentions port.
func (s *Service) Mentions() chat.Mentions { return mentions{s} }

// Reactions returns the chat.Reactions port.
func (s *Service) Reactions() chat.Reactions { return reactions{s} }

// actorOf returns the actor in ctx; problem.ErrUnauthenticated without one. The authorizer
// refuses a context without an actor too; this names the author of a write.
func actorOf(ctx context.Context) (actor.Actor, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	return a, nil
}

// The resources the use cases authorize against, with their ancestors from the loaded row.

func spaceResource(id uuid.UUID) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceSpace, ID: id, SpaceID: id}
}

func channelResource(c chat.Channel) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceChannel, ID: c.ID, SpaceID: c.SpaceID, ChannelID: c.ID}
}

// channelOf is the channel resource of a thread or message, for the moderation rules that
// are asked on the channel.
func channelOf(spaceID, channelID uuid.UUID) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceChannel, ID: channelID, SpaceID: spaceID, ChannelID: channelID}
}

func threadResource(t chat.Thread) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceThread, ID: t.ID, SpaceID: t.SpaceID, ChannelID: t.ChannelID, ThreadID: t.ID}
}

func messageResource(m chat.Message) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceMessage, ID: m.ID, SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID}
}

// isDenial reports whether err is an authorization outcome that hides a row from a listing
// (filter mode), rather than a failure.
func isDenial(err error) bool {
	return errors.Is(err, problem.ErrNotFound) || errors.Is(err, problem.ErrForbidden)
}
