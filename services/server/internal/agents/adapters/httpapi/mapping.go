package httpapi

import (
	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
)

// errMissingBody answers a createAgent without a body. The strict server already refuses a
// body that is not JSON; a request with no body at all reaches the handler with a nil Body.
var errMissingBody = problem.Validation(problem.FieldError{Field: "body", Message: "is required"})

// fromAPICreateAgent converts the request body into the use case's input; an absent
// description is an empty one.
func fromAPICreateAgent(b apigen.CreateAgentRequest) agents.CreateInput {
	in := agents.CreateInput{DisplayName: b.DisplayName, Handle: b.Handle}
	if b.Description != nil {
		in.Description = *b.Description
	}
	return in
}

// toAPIAgent converts an agent into the Agent of the API; an empty description is omitted
// (no JSON null, no empty string that means nothing).
func toAPIAgent(a agents.Agent) apigen.Agent {
	out := apigen.Agent{
		Id:          a.ID,
		DisplayName: a.DisplayName,
		Handle:      a.Handle,
		CreatedBy:   a.CreatedBy,
		CreatedAt:   a.CreatedAt.UTC(),
	}
	if a.Description != "" {
		d := a.Description
		out.Description = &d
	}
	return out
}

// fromAPICreateRun converts createRun's body into the use case's input; absent members are
// empty.
func fromAPICreateRun(threadID uuid.UUID, b apigen.CreateRunRequest) agents.RunInput {
	in := agents.RunInput{ThreadID: threadID, RequestedBy: b.RequestedBy}
	if b.InvocationId != nil {
		in.InvocationID = *b.InvocationId
	}
	if b.State != nil {
		in.State = string(*b.State)
	}
	if b.Progress != nil {
		in.Progress = *b.Progress
	}
	return in
}

// toAPIRun converts a run into the Run of the API; absent ids and times are omitted, never
// null.
func toAPIRun(r agents.Run) apigen.Run {
	out := apigen.Run{
		Id: r.ID, AgentId: r.AgentID, ThreadId: r.ThreadID, ChannelId: r.ChannelID, SpaceId: optID(r.SpaceID),
		RequestedBy: r.RequestedBy, InvocationId: optID(r.InvocationID), State: apigen.RunState(r.State),
		Progress: r.Progress, Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		CancelledBy: optID(r.CancelledBy),
	}
	if !r.EndedAt.IsZero() {
		t := r.EndedAt.UTC()
		out.EndedAt = &t
	}
	return out
}

// optID is nil for uuid.Nil, so that the member is omitted.
func optID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// toAPIInvocation converts an invocation into the Invocation of the API.
func toAPIInvocation(i agents.Invocation) apigen.Invocation {
	return apigen.Invocation{
		Id: i.ID, AgentId: i.AgentID, MessageId: i.MessageID, ThreadId: i.ThreadID, ChannelId: i.ChannelID,
		InvokedBy: i.InvokedBy, Reason: apigen.InvocationReason(i.Reason), Attempt: i.Attempt,
		State: apigen.InvocationState(i.State), CreatedAt: i.CreatedAt.UTC(),
	}
}

// toAPIPresence converts an agent's presence into sendAgentHeartbeat's answer; an empty
// billing mode is omitted.
func toAPIPresence(p agents.Presence) apigen.AgentHeartbeat {
	out := apigen.AgentHeartbeat{State: apigen.AgentRuntimeState(p.State), LastHeartbeatAt: p.LastHeartbeatAt}
	if p.ReportedBillingMode != "" {
		m := p.ReportedBillingMode
		out.ReportedBillingMode = &m
	}
	return out
}
