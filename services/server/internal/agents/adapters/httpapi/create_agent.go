package httpapi

import (
	"context"
	"fmt"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// CreateAgent creates an agent (its principal, its profile and agent.created, in one
// transaction) for an actor allowed agent.create on the instance: 201 with the agent, 400
// naming every invalid field, 409 for a taken handle.
func (s *Server) CreateAgent(ctx context.Context, req apigen.CreateAgentRequestObject) (apigen.CreateAgentResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionAgentCreate, authorize.Instance()); err != nil {
		return nil, fmt.Errorf("create agent: authorize: %w", err)
	}
	if req.Body == nil {
		return nil, fmt.Errorf("create agent: read body: %w", errMissingBody)
	}
	agent, err := s.creator.Create(ctx, fromAPICreateAgent(*req.Body))
	if err != nil {
		return nil, fmt.Errorf("create agent: create: %w", err)
	}
	return apigen.CreateAgent201JSONResponse(toAPIAgent(agent)), nil
}
