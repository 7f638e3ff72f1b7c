// Package httpapi serves the agents module's HTTP operations (createAgent, listAgents,
// sendAgentHeartbeat, createRun, getRun, updateRun, cancelRun, ackInvocation, getInvocation)
// as methods of the generated strict server, one file per operation; internal/wire embeds
// Server into the one strict server it mounts. Successes are typed responses; every problem
// is the error of its kind, which the edge's one table answers (ADR 0033).
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

// Heartbeater records heartbeats; agents/app.Presence implements it.
type Heartbeater interface {
	// Heartbeat records a heartbeat of the agent in ctx (see app.Presence.Heartbeat).
	Heartbeat(ctx context.Context, billingMode *string) (agents.Presence, error)
}

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides createAgent and listAgents before the handler does anything else;
	// the other use cases authorize themselves.
	Authorizer authorize.Authorizer
	// Creator creates agents.
	Creator Creator
	// Agents lists the agents the actor may read.
	Agents agents.Agents
	// Heartbeats records the calling agent's heartbeats.
	Heartbeats Heartbeater
	// Runs starts, reads, moves and cancels runs (their thread decides, ADR 0027).
	Runs agents.Runs
	// Invocations acknowledges and reads invocations (ADR 0031).
	Invocations agents.Invocations
}

// Server implements the strict-server methods of the agents module's operations.
type Server struct {
	authz       authorize.Authorizer
	creator     Creator
	agents      agents.Agents
	heartbeats  Heartbeater
	runs        agents.Runs
	invocations agents.Invocations
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
	if deps.Heartbeats == nil {
		errs = append(errs, errors.New("heartbeater is nil"))
	}
	if deps.Runs == nil {
		errs = append(errs, errors.New("runs port is nil"))
	}
	if deps.Invocations == nil {
		errs = append(errs, errors.New("invocations port is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Server{
		authz: deps.Authorizer, creator: deps.Creator, agents: deps.Agents,
		heartbeats: deps.Heartbeats, runs: deps.Runs, invocations: deps.Invocations,
	}, nil
}
