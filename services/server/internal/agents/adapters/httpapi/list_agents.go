package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// ListAgents answers the agents the actor may read (each filtered by agent.read) to an actor
// allowed agent.read on the instance, ordered by handle; items is [] when there are none.
func (s *Server) ListAgents(ctx context.Context, _ apigen.ListAgentsRequestObject) (apigen.ListAgentsResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionAgentRead, authorize.Instance()); err != nil {
		return listAgentsFailure(ctx, "authorize", err)
	}
	list, err := s.agents.List(ctx)
	if err != nil {
		return listAgentsFailure(ctx, "list", err)
	}
	items := make([]apigen.Agent, len(list))
	for i, a := range list {
		items[i] = toAPIAgent(a)
	}
	return apigen.ListAgents200JSONResponse{Items: items}, nil
}

// listAgentsFailure answers err with its problem when listAgents declares the status, and
// otherwise returns it for the edge (500, logged).
func listAgentsFailure(ctx context.Context, step string, err error) (apigen.ListAgentsResponseObject, error) {
	if r, ok := problemFor(ctx, err, listAgentsProblems); ok {
		return r, nil
	}
	return nil, fmt.Errorf("list agents: %s: %w", step, err)
}
