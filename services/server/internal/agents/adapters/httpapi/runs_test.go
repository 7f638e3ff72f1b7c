package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/adapters/httpapi"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

// fakeRuns answers every method of agents.Runs with run and err, recording what it was asked.
type fakeRuns struct {
	run agents.Run
	err error

	mu      sync.Mutex
	inputs  []agents.RunInput
	changes []agents.RunChange
	ids     []uuid.UUID
}

func (f *fakeRuns) Create(_ context.Context, in agents.RunInput) (agents.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	return f.run, f.err
}

func (f *fakeRuns) Get(_ context.Context, id uuid.UUID) (agents.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, id)
	return f.run, f.err
}

func (f *fakeRuns) Update(_ context.Context, id uuid.UUID, c agents.RunChange) (agents.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids, f.changes = append(f.ids, id), append(f.changes, c)
	return f.run, f.err
}

func (f *fakeRuns) Cancel(_ context.Context, id uuid.UUID) (agents.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, id)
	return f.run, f.err
}

func (f *fakeRuns) InProgress(context.Context) ([]agents.Run, error) { panic("not served over HTTP") }

var (
	runID    = uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e90")
	threadID = uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e81")
	queued   = agents.Run{
		ID: runID, AgentID: robin.ID, ThreadID: threadID, ChannelID: uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e80"),
		RequestedBy: robin.CreatedBy, State: agents.RunQueued, Version: 1,
		CreatedAt: time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC), UpdatedAt: time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC),
	}
	// queuedJSON has no space_id, invocation_id, ended_at or cancelled_by: absent, never null.
	queuedJSON = `{"agent_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7a","channel_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e80",` +
		`"created_at":"2026-12-01T09:30:15Z","id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e90","progress":"",` +
		`"requested_by":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77","state":"queued","thread_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e81",` +
		`"updated_at":"2026-12-01T09:30:15Z","version":1}` + "\n"
)

// runsServer is a Server whose runs port is runs; the runs handlers use nothing else.
func runsServer(t *testing.T, runs *fakeRuns) *httpapi.Server {
	t.Helper()
	fake := &fakeAgents{}
	s, err := httpapi.New(httpapi.Deps{
		Authorizer: &authorizetest.Authorizer{Err: errors.New("the runs handlers do not authorize")},
		Creator:    fake, Agents: fake, Heartbeats: noHeartbeats{}, Runs: runs, Invocations: noInvocations{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// noHeartbeats is a Heartbeater the tests of other operations never call.
type noHeartbeats struct{}

func (noHeartbeats) Heartbeat(context.Context, *string) (agents.Presence, error) {
	panic("not called")
}

// noInvocations is an invocations port the tests of other operations never call.
type noInvocations struct{}

func (noInvocations) Ack(context.Context, uuid.UUID, string) (agents.Invocation, error) {
	panic("not called")
}

func (noInvocations) Get(context.Context, uuid.UUID) (agents.Invocation, error) {
	panic("not called")
}

// TestRunHandlers: each handler converts and delegates; a problem is the error the edge
// answers with its body, anything else is left to the edge as a 500.
func TestRunHandlers(t *testing.T) {
	t.Parallel()
	cancelled := queued
	cancelled.State, cancelled.SpaceID, cancelled.InvocationID, cancelled.CancelledBy = agents.RunCancelled, uuid.Max, uuid.Max, robin.CreatedBy
	cancelled.EndedAt, cancelled.Version = cancelled.CreatedAt.Add(time.Minute), 2
	cancelledJSON := `{"agent_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7a","cancelled_by":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77",` +
		`"channel_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e80","created_at":"2026-12-01T09:30:15Z","ended_at":"2026-12-01T09:31:15Z",` +
		`"id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e90","invocation_id":"ffffffff-ffff-ffff-ffff-ffffffffffff","progress":"",` +
		`"requested_by":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77","space_id":"ffffffff-ffff-ffff-ffff-ffffffffffff","state":"cancelled",` +
		`"thread_id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e81","updated_at":"2026-12-01T09:30:15Z","version":2}` + "\n"
	running := apigen.CreateRunRequestStateRunning
	tests := []struct {
		name       string
		run        agents.Run
		err        error
		call       func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error)
		wantStatus int
		wantBody   string
		wantErr    error
	}{
		{
			name: "create", run: queued, wantStatus: http.StatusCreated, wantBody: queuedJSON,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.CreateRun(ctx, apigen.CreateRunRequestObject{ThreadId: threadID, Body: &apigen.CreateRunRequest{RequestedBy: robin.CreatedBy, State: &running}})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitCreateRunResponse(w) })
			},
		},
		{
			name: "create without a body", wantStatus: http.StatusBadRequest,
			wantErr: problem.Validation(problem.FieldError{Field: "body", Message: "is required"}),
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.CreateRun(ctx, apigen.CreateRunRequestObject{ThreadId: threadID})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitCreateRunResponse(w) })
			},
		},
		{
			name: "create refused", err: fmt.Errorf("agents: create run: %w", problem.ErrForbidden), wantStatus: http.StatusForbidden, wantErr: problem.ErrForbidden,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.CreateRun(ctx, apigen.CreateRunRequestObject{ThreadId: threadID, Body: &apigen.CreateRunRequest{RequestedBy: robin.CreatedBy}})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitCreateRunResponse(w) })
			},
		},
		{
			name: "get", run: queued, wantStatus: http.StatusOK, wantBody: queuedJSON,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.GetRun(ctx, apigen.GetRunRequestObject{RunId: runID})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitGetRunResponse(w) })
			},
		},
		{
			name: "get hidden", err: problem.ErrNotFound, wantStatus: http.StatusNotFound, wantErr: problem.ErrNotFound,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.GetRun(ctx, apigen.GetRunRequestObject{RunId: runID})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitGetRunResponse(w) })
			},
		},
		{
			name: "get fails", err: errDB,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.GetRun(ctx, apigen.GetRunRequestObject{RunId: runID})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitGetRunResponse(w) })
			},
		},
		{
			name: "update refused by the machine", err: problem.New(problem.ErrConflict, "illegal run state transition"), wantStatus: http.StatusConflict,
			wantErr: problem.New(problem.ErrConflict, "illegal run state transition"),
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.UpdateRun(ctx, apigen.UpdateRunRequestObject{RunId: runID, Body: &apigen.UpdateRunRequest{State: apigen.RunStateSucceeded}})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitUpdateRunResponse(w) })
			},
		},
		{
			name: "cancel", run: cancelled, wantStatus: http.StatusOK, wantBody: cancelledJSON,
			call: func(ctx context.Context, s *httpapi.Server) (func(http.ResponseWriter) error, error) {
				r, err := s.CancelRun(ctx, apigen.CancelRunRequestObject{RunId: runID})
				return visitor(r, err, func(w http.ResponseWriter) error { return r.VisitCancelRunResponse(w) })
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := runsServer(t, &fakeRuns{run: tc.run, err: tc.err})
			write, err := tc.call(correlation.With(t.Context(), "req-1"), s)
			var resp any // a nil func in an interface would not be nil
			if write != nil {
				resp = write
			}
			rec := visit(t, resp, err, tc.wantStatus, write)
			if rec == nil {
				return
			}
			if tc.wantErr != nil {
				checkSameAsEdge(t, rec, tc.wantErr)
				return
			}
			if rec.Body.String() != tc.wantBody {
				t.Fatalf("body\n %s\nwant\n %s", rec.Body, tc.wantBody)
			}
		})
	}
}

// visitor returns the response's Visit method, or the handler's error for the edge.
func visitor(resp any, err error, write func(http.ResponseWriter) error) (func(http.ResponseWriter) error, error) {
	if err != nil || resp == nil {
		return nil, err
	}
	return write, nil
}

// TestCreateRunInput: the body's optional members reach the use case as given, absent ones as
// zero values.
func TestCreateRunInput(t *testing.T) {
	t.Parallel()
	fake := &fakeRuns{run: queued}
	s := runsServer(t, fake)
	running, progress, inv := apigen.CreateRunRequestStateRunning, "Reading", uuid.Max
	bodies := []apigen.CreateRunRequest{
		{RequestedBy: robin.CreatedBy},
		{RequestedBy: robin.CreatedBy, State: &running, Progress: &progress, InvocationId: &inv},
	}
	for _, b := range bodies {
		if _, err := s.CreateRun(t.Context(), apigen.CreateRunRequestObject{ThreadId: threadID, Body: &b}); err != nil {
			t.Fatal(err)
		}
	}
	want := []agents.RunInput{
		{ThreadID: threadID, RequestedBy: robin.CreatedBy},
		{ThreadID: threadID, RequestedBy: robin.CreatedBy, State: "running", Progress: "Reading", InvocationID: uuid.Max},
	}
	if len(fake.inputs) != 2 || fake.inputs[0] != want[0] || fake.inputs[1] != want[1] {
		t.Fatalf("inputs %+v, want %+v", fake.inputs, want)
	}
	if _, err := s.UpdateRun(t.Context(), apigen.UpdateRunRequestObject{RunId: runID, Body: &apigen.UpdateRunRequest{State: apigen.RunStateRunning, Progress: &progress}}); err != nil {
		t.Fatal(err)
	}
	if c := fake.changes[0]; c.State != "running" || c.Progress == nil || *c.Progress != "Reading" || fake.ids[0] != runID {
		t.Fatalf("change %+v of %v, want running with its progress of %s", c, fake.ids, runID)
	}
}
