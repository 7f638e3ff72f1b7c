package httpapi

import (
	"context"
	"errors"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/apigen"
)

// Heartbeater records heartbeats; agents/app.Presence implements it.
type Heartbeater interface {
	// Heartbeat records a heartbeat of the agent in ctx (see app.Presence.Heartbeat).
	Heartbeat(ctx context.Context, billingMode *string) (agents.Presence, error)
}

// PresenceServer implements the strict-server method of sendAgentHeartbeat. It is a type of
// its own beside Server, so that presence and the profile operations grow apart.
type PresenceServer struct {
	heartbeats Heartbeater
}

// NewPresence returns a PresenceServer over h; it fails when h is nil.
func NewPresence(h Heartbeater) (*PresenceServer, error) {
	if h == nil {
		return nil, errors.New("heartbeater is nil")
	}
	return &PresenceServer{heartbeats: h}, nil
}

// SendAgentHeartbeat records the calling agent's heartbeat; the use case authorizes (only
// agents, agent.read on itself) and validates the billing mode.
func (s *PresenceServer) SendAgentHeartbeat(ctx context.Context, req apigen.SendAgentHeartbeatRequestObject) (apigen.SendAgentHeartbeatResponseObject, error) {
	var mode *string
	if req.Body != nil {
		mode = req.Body.ReportedBillingMode
	}
	p, err := s.heartbeats.Heartbeat(ctx, mode)
	if err != nil {
		return nil, err
	}
	out := apigen.SendAgentHeartbeat200JSONResponse{State: apigen.AgentRuntimeState(p.State), LastHeartbeatAt: p.LastHeartbeatAt}
	if p.ReportedBillingMode != "" {
		m := p.ReportedBillingMode
		out.ReportedBillingMode = &m
	}
	return out, nil
}
