package httpapi

import (
	"context"
	"net/http"

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

// The problem statuses each operation declares in api/openapi.yaml.
var (
	createAgentProblems = []int{
		http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict,
	}
	listAgentsProblems = []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}
)

// problemResponse is a problem answer of this module's operations: the kernel's
// problem.Response (encoded exactly as the edge's problem.Write) with the generated Visit
// methods.
type problemResponse struct {
	problem.Response
}

// VisitCreateAgentResponse writes the problem.
func (r problemResponse) VisitCreateAgentResponse(w http.ResponseWriter) error {
	return r.Write(w)
}

// VisitListAgentsResponse writes the problem.
func (r problemResponse) VisitListAgentsResponse(w http.ResponseWriter) error {
	return r.Write(w)
}

// problemFor returns the problem response of err when its status is one the operation
// declares (problem.Declared); ok is false for anything else, which the handler returns as an
// error for the edge to answer.
func problemFor(ctx context.Context, err error, declared []int) (problemResponse, bool) {
	r, ok := problem.Declared(ctx, err, declared)
	return problemResponse{r}, ok
}
