package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

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

// problemResponse is a problem answer: the kernel's problem body, encoded exactly as
// problem.Write encodes it (same members, same order). The bodies of a 401 or a 404 must not
// differ with their cause (spec 04: existence is never leaked), and the generated problem
// types would encode the members in another order than the edge's 401 and 404.
type problemResponse struct {
	p problem.Problem
}

// VisitCreateAgentResponse writes the problem.
func (r problemResponse) VisitCreateAgentResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitListAgentsResponse writes the problem.
func (r problemResponse) VisitListAgentsResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r problemResponse) write(w http.ResponseWriter) error {
	body, err := json.Marshal(r.p)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", problem.ContentType)
	w.WriteHeader(r.p.Status)
	_, err = w.Write(append(body, '\n'))
	return err
}

// problemFor returns the problem response of err when its status is one the operation
// declares; ok is false for anything else, which the handler returns as an error for the edge
// to answer (500 without internals, the cause logged).
func problemFor(ctx context.Context, err error, declared []int) (r problemResponse, ok bool) {
	p := problem.From(ctx, err)
	if !slices.Contains(declared, p.Status) {
		return problemResponse{}, false
	}
	return problemResponse{p: p}, true
}
