package demo

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	syncmod "bothy.example.com/server/internal/sync"
)

// Deps are the modules' use cases the demo writes and reads through: the modules' own ports
// where they offer one, and the ports below, declared here by their one consumer, for the
// authorized use cases a request would run (making a grant, creating an agent). The composition root binds them (wire's App.Demo).
type Deps struct {
	// Owners bootstraps the instance's first owner when it has none.
	Owners authz.Owners
	// Principals creates people and reads a principal.
	Principals identity.Principals
	// Directory finds principals by handle.
	Directory identity.Directory
	// Tokens issues the fresh token of each demo principal.
	Tokens identity.Tokens
	// Grants lists grants and makes them as the actor in ctx (authorized as createGrant is).
	Grants Grants
	// Agents creates an agent as the actor in ctx (authorized as createAgent is).
	Agents Agents
	// Spaces, Channels, Threads and Messages are chat's use cases, as the actor in ctx.
	Spaces   chat.Spaces
	Channels chat.Channels
	Threads  chat.Threads
	Messages chat.Messages
	// Personal keeps read states and drafts, as the actor in ctx.
	Personal syncmod.Personal
	// Addr is http.addr, for World.BaseURL.
	Addr string
}

// Grants is what the demo needs of authz's grants: a principal's grants (every grant for
// uuid.Nil) and a grant made as the actor in ctx, authorized as createGrant authorizes it.
type Grants interface {
	// List returns the principal's grants, every grant for uuid.Nil.
	List(ctx context.Context, principalID uuid.UUID) ([]authz.Grant, error)
	// CreateGrant makes the grant as the actor in ctx, authorized as createGrant is.
	CreateGrant(ctx context.Context, in authz.GrantInput) (authz.Grant, error)
}

// Agents is what the demo needs of the agents module: an agent created as the actor in ctx,
// authorized as createAgent authorizes it.
type Agents interface {
	// Create creates the agent as the actor in ctx, authorized as createAgent is.
	Create(ctx context.Context, in agents.CreateInput) (agents.Agent, error)
}
