package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/apigen"
)

// RunsServer implements the strict-server methods of createRun, getRun, updateRun and
// cancelRun. The runs use cases authorize themselves (the run's thread decides, ADR 0027), so
// each handler converts and delegates; internal/wire embeds RunsServer beside Server.
type RunsServer struct {
	runs agents.Runs
}

// NewRuns returns a RunsServer over the runs port; it fails when the port is missing, so a
// wiring mistake stops the process at start.
func NewRuns(runs agents.Runs) (*RunsServer, error) {
	if runs == nil {
		return nil, errors.New("runs port is nil")
	}
	return &RunsServer{runs: runs}, nil
}

// The problem statuses each runs operation declares in api/openapi.yaml.
var (
	createRunProblems = []int{
		http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict,
	}
	getRunProblems    = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}
	updateRunProblems = createRunProblems
	cancelRunProblems = createRunProblems
)

// CreateRun starts a run of the calling agent in the thread: 201 with the run.
func (s *RunsServer) CreateRun(ctx context.Context, req apigen.CreateRunRequestObject) (apigen.CreateRunResponseObject, error) {
	if req.Body == nil {
		return runFailure[apigen.CreateRunResponseObject](ctx, "create run", "read body", errMissingBody, createRunProblems)
	}
	in := agents.RunInput{ThreadID: req.ThreadId, RequestedBy: req.Body.RequestedBy}
	if req.Body.InvocationId != nil {
		in.InvocationID = *req.Body.InvocationId
	}
	if req.Body.State != nil {
		in.State = string(*req.Body.State)
	}
	if req.Body.Progress != nil {
		in.Progress = *req.Body.Progress
	}
	run, err := s.runs.Create(ctx, in)
	if err != nil {
		return runFailure[apigen.CreateRunResponseObject](ctx, "create run", "create", err, createRunProblems)
	}
	return apigen.CreateRun201JSONResponse(toAPIRun(run)), nil
}

// GetRun answers a run whose thread the actor may read.
func (s *RunsServer) GetRun(ctx context.Context, req apigen.GetRunRequestObject) (apigen.GetRunResponseObject, error) {
	run, err := s.runs.Get(ctx, req.RunId)
	if err != nil {
		return runFailure[apigen.GetRunResponseObject](ctx, "get run", "get", err, getRunProblems)
	}
	return apigen.GetRun200JSONResponse(toAPIRun(run)), nil
}

// UpdateRun moves a run of the calling agent: 200 with the run.
func (s *RunsServer) UpdateRun(ctx context.Context, req apigen.UpdateRunRequestObject) (apigen.UpdateRunResponseObject, error) {
	if req.Body == nil {
		return runFailure[apigen.UpdateRunResponseObject](ctx, "update run", "read body", errMissingBody, updateRunProblems)
	}
	run, err := s.runs.Update(ctx, req.RunId, agents.RunChange{State: string(req.Body.State), Progress: req.Body.Progress})
	if err != nil {
		return runFailure[apigen.UpdateRunResponseObject](ctx, "update run", "update", err, updateRunProblems)
	}
	return apigen.UpdateRun200JSONResponse(toAPIRun(run)), nil
}

// CancelRun cancels a run for its requester or a manager of its channel: 200 with the run.
func (s *RunsServer) CancelRun(ctx context.Context, req apigen.CancelRunRequestObject) (apigen.CancelRunResponseObject, error) {
	run, err := s.runs.Cancel(ctx, req.RunId)
	if err != nil {
		return runFailure[apigen.CancelRunResponseObject](ctx, "cancel run", "cancel", err, cancelRunProblems)
	}
	return apigen.CancelRun200JSONResponse(toAPIRun(run)), nil
}

// runFailure answers err with its problem when the operation declares the status, and
// otherwise returns it for the edge (500, logged). R is the operation's response interface,
// which problemResponse implements.
func runFailure[R any](ctx context.Context, op, step string, err error, declared []int) (R, error) {
	var zero R
	if r, ok := problemFor(ctx, err, declared); ok {
		if out, ok := any(r).(R); ok {
			return out, nil
		}
	}
	return zero, fmt.Errorf("%s: %s: %w", op, step, err)
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

// VisitCreateRunResponse writes the problem.
func (r problemResponse) VisitCreateRunResponse(w http.ResponseWriter) error { return r.Write(w) }

// VisitGetRunResponse writes the problem.
func (r problemResponse) VisitGetRunResponse(w http.ResponseWriter) error { return r.Write(w) }

// VisitUpdateRunResponse writes the problem.
func (r problemResponse) VisitUpdateRunResponse(w http.ResponseWriter) error { return r.Write(w) }

// VisitCancelRunResponse writes the problem.
func (r problemResponse) VisitCancelRunResponse(w http.ResponseWriter) error { return r.Write(w) }
