package problem

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
)

// Response is a problem answer a strict-server handler returns as a typed response where the
// problem carries headers of its own (sync's 410 resync_required with its Cache-Control; every
// other problem is an error for the edge, ADR 0033). It is encoded exactly as WriteProblem
// encodes (same members, same order), so its body is byte for byte the edge's. Modules embed
// it in a type that adds the generated Visit<Operation>Response methods.
type Response struct {
	// Problem is the body, from From.
	Problem Problem
}

// Write sends the problem; it fails only when writing to w fails.
func (r Response) Write(w http.ResponseWriter) error {
	body, err := json.Marshal(r.Problem)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(r.Problem.Status)
	_, err = w.Write(append(body, '\n'))
	return err
}

// Declared maps err through From and returns its Response when the status is one the
// operation declares in api/openapi.yaml; ok is false for anything else, which the handler
// returns as an error for the edge to answer (a 500 without internals, the cause logged).
func Declared(ctx context.Context, err error, statuses []int) (Response, bool) {
	p := From(ctx, err)
	if !slices.Contains(statuses, p.Status) {
		return Response{}, false
	}
	return Response{Problem: p}, true
}
