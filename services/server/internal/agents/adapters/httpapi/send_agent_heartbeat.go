package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
)

// SendAgentHeartbeat records the calling agent's heartbeat; the use case authorizes (only
// agents, agent.read on itself) and validates the billing mode.
func (s *Server) SendAgentHeartbeat(ctx context.Context, req apigen.SendAgentHeartbeatRequestObject) (apigen.SendAgentHeartbeatResponseObject, error) {
	var mode *string
	if req.Body != nil {
		mode = req.Body.ReportedBillingMode
	}
	p, err := s.heartbeats.Heartbeat(ctx, mode)
	if err != nil {
		return nil, err
	}
	return apigen.SendAgentHeartbeat200JSONResponse(toAPIPresence(p)), nil
}
