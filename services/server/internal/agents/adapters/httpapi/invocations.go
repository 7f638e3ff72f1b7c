package httpapi

import (
	"context"
	"errors"
	"net/http"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/apigen"
)

// InvocationsServer implements the strict-server methods of ackInvocation and getInvocation
// (ADR 0031). The invocations use cases authorize themselves, so each handler converts and
// delegates; internal/wire embeds InvocationsServer beside Server.
type InvocationsServer struct {
	invocations agents.Invocations
}

// NewInvocations returns an InvocationsServer over the invocations port; it fails when the
// port is missing, so a wiring mistake stops the process at start.
func NewInvocations(invocations agents.Invocations) (*InvocationsServer, error) {
	if invocations == nil {
		return nil, errors.New("invocations port is nil")
	}
	return &InvocationsServer{invocations: invocations}, nil
}

// The problem statuses each invocations operation declares in api/openapi.yaml.
var invocationProblems = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}

// AckInvocation acknowledges an invocation of the calling agent with its token: 200 with the
// invocation.
func (s *InvocationsServer) AckInvocation(ctx context.Context, req apigen.AckInvocationRequestObject) (apigen.AckInvocationResponseObject, error) {
	if req.Body == nil {
		return runFailure[apigen.AckInvocationResponseObject](ctx, "ack invocation", "read body", errMissingBody, invocationProblems)
	}
	inv, err := s.invocations.Ack(ctx, req.InvocationId, req.Body.InvocationToken)
	if err != nil {
		return runFailure[apigen.AckInvocationResponseObject](ctx, "ack invocation", "ack", err, invocationProblems)
	}
	return apigen.AckInvocation200JSONResponse(toAPIInvocation(inv)), nil
}

// GetInvocation answers an invocation to its agent or its invoking person.
func (s *InvocationsServer) GetInvocation(ctx context.Context, req apigen.GetInvocationRequestObject) (apigen.GetInvocationResponseObject, error) {
	inv, err := s.invocations.Get(ctx, req.InvocationId)
	if err != nil {
		return runFailure[apigen.GetInvocationResponseObject](ctx, "get invocation", "get", err, invocationProblems)
	}
	return apigen.GetInvocation200JSONResponse(toAPIInvocation(inv)), nil
}

// toAPIInvocation converts an invocation into the Invocation of the API.
func toAPIInvocation(i agents.Invocation) apigen.Invocation {
	return apigen.Invocation{
		Id: i.ID, AgentId: i.AgentID, MessageId: i.MessageID, ThreadId: i.ThreadID, ChannelId: i.ChannelID,
		InvokedBy: i.InvokedBy, Reason: apigen.InvocationReason(i.Reason), Attempt: i.Attempt,
		State: apigen.InvocationState(i.State), CreatedAt: i.CreatedAt.UTC(),
	}
}

// VisitAckInvocationResponse writes the problem.
func (r problemResponse) VisitAckInvocationResponse(w http.ResponseWriter) error { return r.Write(w) }

// VisitGetInvocationResponse writes the problem.
func (r problemResponse) VisitGetInvocationResponse(w http.ResponseWriter) error { return r.Write(w) }
