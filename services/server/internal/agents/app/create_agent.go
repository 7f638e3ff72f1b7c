package app

import (
	"context"
	"errors"
	"fmt"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// AgentCreated is the durable event type createAgent appends (spec 02): resource the agent,
// received by everyone who may read it (agent.read).
const AgentCreated = "agent.created"

// agentCreatedPayload is agent.created's payload, as sync/domain's register lists it.
type agentCreatedPayload struct {
	AgentID     string `json:"agent_id"`
	DisplayName string `json:"display_name"`
	Handle      string `json:"handle"`
	Description string `json:"description,omitempty"`
	CreatedBy   string `json:"created_by"`
}

// Create creates an agent for the actor in ctx, who must have been authorized agent.create on
// the instance (the handler does that first): in one transaction (joining the caller's), the
// identity principal of kind agent, the profile and the agent.created event. Invalid input is
// one problem.ErrValidation naming every invalid field (display_name and handle as identity
// checks them, description as this module does); identity.ErrHandleTaken (a conflict) when the
// handle is taken; problem.ErrUnauthenticated without an actor.
func (s *Service) Create(ctx context.Context, in agents.CreateInput) (agents.Agent, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return agents.Agent{}, fmt.Errorf("agents: create: %w", problem.ErrUnauthenticated)
	}
	description, descProblem := domain.Description(in.Description)
	var out agents.Agent
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		p, err := s.principals.CreateAgentPrincipal(ctx, identity.AgentInput{DisplayName: in.DisplayName, Handle: in.Handle})
		// Identity validates the name and handle, this module the description: all invalid
		// fields are reported together. A bad description wins over a taken handle, as bad input
		// is reported before conflicts; the transaction then rolls the principal back.
		if verr := invalid(ctx, err, descProblem); verr != nil {
			return verr
		}
		if err != nil {
			return err
		}
		profile := domain.Profile{PrincipalID: p.ID, Description: description, CreatedBy: a.PrincipalID, CreatedAt: p.CreatedAt.UTC()}
		if err := s.store.InsertProfile(ctx, profile); err != nil {
			return err
		}
		out = toAgent(p.Ref(), profile)
		return s.appender.Append(ctx, kernel.Event{
			Type:         AgentCreated,
			ActorID:      a.PrincipalID,
			ResourceKind: kernel.ResourceAgent,
			ResourceID:   p.ID,
			Payload: agentCreatedPayload{
				AgentID:     p.ID.String(),
				DisplayName: out.DisplayName,
				Handle:      out.Handle,
				Description: out.Description,
				CreatedBy:   a.PrincipalID.String(),
			},
		})
	})
	if err != nil {
		return agents.Agent{}, fmt.Errorf("agents: create: %w", err)
	}
	return out, nil
}

// invalid merges a validation error of the principal (principalErr, any error) with the
// description's problem into one validation error naming every invalid field; nil when
// neither is invalid.
func invalid(ctx context.Context, principalErr error, descProblem string) error {
	var fields []problem.FieldError
	if errors.Is(principalErr, problem.ErrValidation) {
		fields = problem.From(ctx, principalErr).Errors
	}
	if descProblem != "" {
		fields = append(fields, problem.FieldError{Field: "description", Message: descProblem})
	}
	if len(fields) == 0 {
		return nil
	}
	return problem.Validation(fields...)
}

// toAgent joins a principal's name and handle with its profile.
func toAgent(ref identity.PrincipalRef, p domain.Profile) agents.Agent {
	return agents.Agent{
		ID:          p.PrincipalID,
		DisplayName: ref.DisplayName,
		Handle:      ref.Handle,
		Description: p.Description,
		CreatedBy:   p.CreatedBy,
		CreatedAt:   p.CreatedAt,
	}
}
