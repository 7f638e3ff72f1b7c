// Package httpapi serves the agents module's HTTP operations (createAgent, listAgents) as
// methods of the generated strict server; internal/wire embeds Server into the one strict
// server it mounts.
package httpapi

import (
	"context"
	"errors"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/kernel/authorize"
)

// Creator creates agents; agents/app.Service implements it.
type Creator interface {
	// Create creates an agent for the actor in ctx (see app.Service.Create for the errors).
	Create(ctx context.Context, in agents.CreateInput) (agents.Agent, error)
}

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides every request before the handler does anything else.
	Authorizer authorize.Authorizer
	// Creator creates agents.
	Creator Creator
	// Agents lists the agents the actor may read.
	Agents agents.Agents
}

// Server implements the strict-server methods of createAgent and listAgents.
type Server struct {
	authz   authorize.Authorizer
	creator Creator
	agents  agents.Agents
}

// New returns a Server over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Creator == nil {
		errs = append(errs, errors.New("agent creator is nil"))
	}
	if deps.Agents == nil {
		errs = append(errs, errors.New("agents port is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Server{authz: deps.Authorizer, creator: deps.Creator, agents: deps.Agents}, nil
}
