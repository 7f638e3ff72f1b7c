package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/adapters/httpapi"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	robin = agents.Agent{
		ID:          uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7a"),
		DisplayName: "Robin",
		Handle:      "robin",
		Description: "Summarises long threads.",
		CreatedBy:   uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"),
		CreatedAt:   time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC),
	}
	samBot = agents.Agent{
		ID:          uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7b"),
		DisplayName: "Sam's bot",
		Handle:      "sam-bot",
		CreatedBy:   uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77"),
		CreatedAt:   time.Date(2026, 12, 1, 9, 31, 0, 0, time.UTC),
	}
	robinJSON  = `{"created_at":"2026-12-01T09:30:15Z","created_by":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77","description":"Summarises long threads.","display_name":"Robin","handle":"robin","id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7a"}`
	samBotJSON = `{"created_at":"2026-12-01T09:31:00Z","created_by":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77","display_name":"Sam's bot","handle":"sam-bot","id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e7b"}`
	errDB      = errors.New("connection reset")
)

func newServer(t *testing.T, authz *authorizetest.Authorizer, fake *fakeAgents) *httpapi.Server {
	t.Helper()
	s, err := httpapi.New(httpapi.Deps{
		Authorizer: authz, Creator: fake, Agents: fake, Heartbeats: noHeartbeats{}, Runs: &fakeRuns{}, Invocations: noInvocations{},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func ptr(s string) *string { return &s }

func TestCreateAgent(t *testing.T) {
	t.Parallel()
	validation := problem.Validation(
		problem.FieldError{Field: "display_name", Message: "is required"},
		problem.FieldError{Field: "handle", Message: "must be 2 to 32 characters"},
		problem.FieldError{Field: "description", Message: "must be at most 500 characters"},
	)
	body := &apigen.CreateAgentRequest{DisplayName: "Robin", Handle: "robin", Description: ptr("Summarises long threads.")}
	tests := []struct {
		name       string
		body       *apigen.CreateAgentRequest
		authz      error
		createErr  error
		wantStatus int    // 0: the handler returns an error for the edge
		wantBody   string // the exact body of a 201
		wantErr    error  // the problem of a 4xx, compared with the edge's body for it
		wantInputs []agents.CreateInput
	}{
		{
			name: "created", body: body, wantStatus: http.StatusCreated, wantBody: robinJSON + "\n",
			wantInputs: []agents.CreateInput{{DisplayName: "Robin", Handle: "robin", Description: "Summarises long threads."}},
		},
		{
			name: "without description", body: &apigen.CreateAgentRequest{DisplayName: "Robin", Handle: "robin"},
			wantStatus: http.StatusCreated, wantBody: robinJSON + "\n",
			wantInputs: []agents.CreateInput{{DisplayName: "Robin", Handle: "robin"}},
		},
		{name: "unauthenticated", body: body, authz: problem.ErrUnauthenticated, wantStatus: 401, wantErr: problem.ErrUnauthenticated},
		{name: "device pending", body: body, authz: problem.ErrDevicePending, wantStatus: 403, wantErr: problem.ErrDevicePending},
		{name: "forbidden", body: body, authz: problem.ErrForbidden, wantStatus: 403, wantErr: problem.ErrForbidden},
		{name: "may not read the instance", body: body, authz: problem.ErrNotFound, wantStatus: 404, wantErr: problem.ErrNotFound},
		{name: "authorizer fails", body: body, authz: errDB},
		{
			name: "no body", wantStatus: 400,
			wantErr: problem.Validation(problem.FieldError{Field: "body", Message: "is required"}),
		},
		{
			name: "invalid fields", body: &apigen.CreateAgentRequest{Handle: "-"}, createErr: fmt.Errorf("agents: create: %w", validation),
			wantStatus: 400, wantErr: validation, wantInputs: []agents.CreateInput{{Handle: "-"}},
		},
		{
			name: "handle taken", body: body, createErr: fmt.Errorf("agents: create: %w", identity.ErrHandleTaken),
			wantStatus: 409, wantErr: identity.ErrHandleTaken,
			wantInputs: []agents.CreateInput{{DisplayName: "Robin", Handle: "robin", Description: "Summarises long threads."}},
		},
		{
			name: "creation fails", body: body, createErr: errDB,
			wantInputs: []agents.CreateInput{{DisplayName: "Robin", Handle: "robin", Description: "Summarises long threads."}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			authz := &authorizetest.Authorizer{Err: tc.authz}
			fake := &fakeAgents{created: robin, createErr: tc.createErr}
			ctx := correlation.With(t.Context(), "req-1")
			resp, err := newServer(t, authz, fake).CreateAgent(ctx, apigen.CreateAgentRequestObject{Body: tc.body})

			if got, want := authz.Decisions(), []authorizetest.Decision{{Action: kernel.ActionAgentCreate, Res: authorize.Instance()}}; !slices.Equal(got, want) {
				t.Fatalf("authorize calls = %+v, want %+v", got, want)
			}
			if inputs, _ := fake.seen(); !slices.Equal(inputs, tc.wantInputs) {
				t.Fatalf("create inputs = %+v, want %+v (nothing before authorization)", inputs, tc.wantInputs)
			}
			rec := visit(t, resp, err, tc.wantStatus, func(w http.ResponseWriter) error { return resp.VisitCreateAgentResponse(w) })
			if rec == nil {
				return
			}
			if tc.wantErr != nil {
				checkSameAsEdge(t, rec, tc.wantErr)
				return
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != tc.wantBody {
				t.Fatalf("201 = %q %s, want %s", rec.Header().Get("Content-Type"), rec.Body, tc.wantBody)
			}
		})
	}
}

func TestListAgents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		authz      error
		list       []agents.Agent
		listErr    error
		wantStatus int
		wantBody   string
		wantErr    error
		wantLists  int
	}{
		{
			name: "listed", list: []agents.Agent{robin, samBot}, wantStatus: 200, wantLists: 1,
			wantBody: `{"items":[` + robinJSON + `,` + samBotJSON + `]}` + "\n",
		},
		{name: "none", wantStatus: 200, wantLists: 1, wantBody: `{"items":[]}` + "\n"},
		{name: "unauthenticated", authz: problem.ErrUnauthenticated, wantStatus: 401, wantErr: problem.ErrUnauthenticated},
		{name: "app without agents:read", authz: problem.ErrForbidden, wantStatus: 403, wantErr: problem.ErrForbidden},
		{name: "may not read the instance", authz: problem.ErrNotFound, wantStatus: 404, wantErr: problem.ErrNotFound},
		{name: "authorizer fails", authz: errDB},
		{name: "device pending while listing", listErr: problem.ErrDevicePending, wantStatus: 403, wantErr: problem.ErrDevicePending, wantLists: 1},
		{name: "list fails", listErr: errDB, wantLists: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			authz := &authorizetest.Authorizer{Err: tc.authz}
			fake := &fakeAgents{list: tc.list, listErr: tc.listErr}
			ctx := correlation.With(t.Context(), "req-1")
			resp, err := newServer(t, authz, fake).ListAgents(ctx, apigen.ListAgentsRequestObject{})

			if got, want := authz.Decisions(), []authorizetest.Decision{{Action: kernel.ActionAgentRead, Res: authorize.Instance()}}; !slices.Equal(got, want) {
				t.Fatalf("authorize calls = %+v, want %+v", got, want)
			}
			if _, lists := fake.seen(); lists != tc.wantLists {
				t.Fatalf("lists = %d, want %d (nothing before authorization)", lists, tc.wantLists)
			}
			rec := visit(t, resp, err, tc.wantStatus, func(w http.ResponseWriter) error { return resp.VisitListAgentsResponse(w) })
			if rec == nil {
				return
			}
			if tc.wantErr != nil {
				checkSameAsEdge(t, rec, tc.wantErr)
				return
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != tc.wantBody {
				t.Fatalf("200 = %q %s, want %s", rec.Header().Get("Content-Type"), rec.Body, tc.wantBody)
			}
		})
	}
}

// visit checks the handler's outcome: for wantStatus 0 an error and no response (nil is
// returned), otherwise a response of that status, written into the returned recorder (a
// problem as the edge writes the handler's error).
func visit(t *testing.T, resp any, err error, wantStatus int, write func(http.ResponseWriter) error) *httptest.ResponseRecorder {
	t.Helper()
	if wantStatus == 0 {
		if err == nil || resp != nil {
			t.Fatalf("handler = %v, %v; want no response and an error for the edge", resp, err)
		}
		if !errors.Is(err, errDB) {
			t.Fatalf("error = %v, want it to wrap %v", err, errDB)
		}
		return nil
	}
	rec := httptest.NewRecorder()
	if err != nil {
		// A problem is the error of its kind, answered by the edge's one table (ADR 0033):
		// written here as the strict server's error hook writes it.
		if resp != nil {
			t.Fatalf("handler = %v, %v; want no response beside the error", resp, err)
		}
		problem.Write(rec, httptest.NewRequestWithContext(correlation.With(context.Background(), "req-1"), http.MethodGet, "/api/v1/agents", nil), err)
	} else if err := write(rec); err != nil {
		t.Fatalf("visit: %v", err)
	}
	if rec.Code != wantStatus {
		t.Fatalf("status = %d, want %d: %s", rec.Code, wantStatus, rec.Body)
	}
	return rec
}

// checkSameAsEdge asserts that rec holds exactly the response problem.Write gives for err, so
// a denial cannot be told from the edge's own 401 or 404.
func checkSameAsEdge(t *testing.T, rec *httptest.ResponseRecorder, err error) {
	t.Helper()
	req := httptest.NewRequestWithContext(correlation.With(context.Background(), "req-1"), http.MethodGet, "/api/v1/agents", nil)
	edge := httptest.NewRecorder()
	problem.Write(edge, req, err)
	if rec.Code != edge.Code || rec.Header().Get("Content-Type") != edge.Header().Get("Content-Type") ||
		!bytes.Equal(rec.Body.Bytes(), edge.Body.Bytes()) {
		t.Fatalf("problem response\n%d %s %s\ndiffers from the edge's\n%d %s %s",
			rec.Code, rec.Header().Get("Content-Type"), rec.Body, edge.Code, edge.Header().Get("Content-Type"), edge.Body)
	}
}

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	fake := &fakeAgents{}
	full := func(change func(*httpapi.Deps)) httpapi.Deps {
		d := httpapi.Deps{
			Authorizer: &authorizetest.Authorizer{}, Creator: fake, Agents: fake,
			Heartbeats: noHeartbeats{}, Runs: &fakeRuns{}, Invocations: noInvocations{},
		}
		change(&d)
		return d
	}
	if _, err := httpapi.New(full(func(*httpapi.Deps) {})); err != nil {
		t.Fatalf("New with every dependency: %v", err)
	}
	for _, deps := range []httpapi.Deps{
		{},
		full(func(d *httpapi.Deps) { d.Authorizer = nil }),
		full(func(d *httpapi.Deps) { d.Creator = nil }),
		full(func(d *httpapi.Deps) { d.Agents = nil }),
		full(func(d *httpapi.Deps) { d.Heartbeats = nil }),
		full(func(d *httpapi.Deps) { d.Runs = nil }),
		full(func(d *httpapi.Deps) { d.Invocations = nil }),
	} {
		if _, err := httpapi.New(deps); err == nil {
			t.Fatalf("New(%+v) succeeded", deps)
		}
	}
}
