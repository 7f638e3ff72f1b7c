package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/problem"
)

// toAPIInstance converts the instance into the InstanceInfo of the API.
func toAPIInstance(info instance.Info) apigen.InstanceInfo {
	return apigen.InstanceInfo{
		Id:        info.ID,
		Name:      info.Name,
		SyncEpoch: info.SyncEpoch,
		Version:   info.Version,
	}
}

// getInstanceProblems are the problem statuses getInstance declares in api/openapi.yaml.
var getInstanceProblems = []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}

// problemResponse is a problem answer: the kernel's problem body, encoded exactly as
// problem.Write encodes it (same members, same order). The bodies of a 401 or a 404 must not
// differ with their cause (spec 04: existence is never leaked), and the generated problem
// types would encode the members in another order than the edge's 401 and 404.
type problemResponse struct {
	p problem.Problem
}

// VisitGetInstanceResponse writes the problem.
func (r problemResponse) VisitGetInstanceResponse(w http.ResponseWriter) error {
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
