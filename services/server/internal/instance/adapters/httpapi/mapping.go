package httpapi

import (
	"context"
	"net/http"

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

// problemResponse is a problem answer of this module's operations: the kernel's
// problem.Response (encoded exactly as the edge's problem.Write) with the generated Visit
// methods.
type problemResponse struct {
	problem.Response
}

// VisitGetInstanceResponse writes the problem.
func (r problemResponse) VisitGetInstanceResponse(w http.ResponseWriter) error {
	return r.Write(w)
}

// problemFor returns the problem response of err when its status is one the operation
// declares (problem.Declared); ok is false for anything else, which the handler returns as an
// error for the edge to answer.
func problemFor(ctx context.Context, err error, declared []int) (problemResponse, bool) {
	r, ok := problem.Declared(ctx, err, declared)
	return problemResponse{r}, ok
}
