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
		return nil, fmt.Errorf("list agents: authorize: %w", err)
	}
	list, err := s.agents.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list agents: list: %w", err)
	}
	items := make([]apigen.Agent, len(list))
	for i, a := range list {
		items[i] = toAPIAgent(a)
	}
	return apigen.ListAgents200JSONResponse{Items: items}, nil
}
