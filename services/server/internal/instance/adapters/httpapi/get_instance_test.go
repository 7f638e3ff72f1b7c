package httpapi_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/instance/adapters/httpapi"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

var testInfo = instance.Info{
	ID:        uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70"),
	Name:      "bothy",
	SyncEpoch: uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e71"),
	CreatedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),
	Version:   3,
}

func TestGetInstance(t *testing.T) {
	t.Parallel()
	errDB := errors.New("connection reset")
	tests := []struct {
		name       string
		authz      error
		infoErr    error
		wantStatus int    // 0: the handler returns an error for the edge
		wantBody   string // the exact body of a 200
		wantReads  int
	}{
		{
			name:       "allowed",
			wantStatus: http.StatusOK,
			wantBody:   `{"id":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70","name":"bothy","sync_epoch":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e71","version":3}` + "\n",
			wantReads:  1,
		},
		{name: "unauthenticated", authz: problem.ErrUnauthenticated, wantStatus: http.StatusUnauthorized},
		{name: "device pending", authz: fmt.Errorf("authz: %w", problem.ErrDevicePending), wantStatus: http.StatusForbidden},
		{name: "forbidden", authz: problem.ErrForbidden, wantStatus: http.StatusForbidden},
		{name: "may not read", authz: problem.ErrNotFound, wantStatus: http.StatusNotFound},
		{name: "authorizer fails", authz: errDB},
		{name: "instance unreadable", infoErr: errDB, wantReads: 1},
		{name: "no instance row", infoErr: instance.ErrNoInstance, wantReads: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			authz := &authorizetest.Authorizer{Err: tc.authz}
			info := &fakeInfo{info: testInfo, err: tc.infoErr}
			s, err := httpapi.New(httpapi.Deps{Authorizer: authz, Instance: info})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			ctx := correlation.With(t.Context(), "req-1")
			resp, err := s.GetInstance(ctx, apigen.GetInstanceRequestObject{})

			wantCalls := []authorizetest.Decision{{Action: kernel.ActionInstanceRead, Res: authorize.Instance()}}
			if got := authz.Decisions(); !slices.Equal(got, wantCalls) {
				t.Fatalf("authorize calls = %+v, want %+v", got, wantCalls)
			}
			if got := info.count(); got != tc.wantReads {
				t.Fatalf("instance reads = %d, want %d (nothing before authorization)", got, tc.wantReads)
			}
			if tc.wantStatus == 0 {
				want := tc.authz
				if want == nil {
					want = tc.infoErr
				}
				if resp != nil || !errors.Is(err, want) {
					t.Fatalf("GetInstance = %v, %v; want no response and %v", resp, err, want)
				}
				return
			}
			rec := httptest.NewRecorder()
			if tc.wantStatus == http.StatusOK {
				if err != nil {
					t.Fatalf("GetInstance: %v", err)
				}
				if err := resp.VisitGetInstanceResponse(rec); err != nil {
					t.Fatalf("visit: %v", err)
				}
			} else {
				// A problem is the error of its kind, which the edge's one table answers
				// (ADR 0033): exactly the edge's own 401 or 404, so a denial cannot be told apart.
				if resp != nil || !errors.Is(err, tc.authz) {
					t.Fatalf("GetInstance = %v, %v; want no response and %v", resp, err, tc.authz)
				}
				problem.Write(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/instance", nil), err)
			}
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusOK {
				if rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != tc.wantBody {
					t.Fatalf("200 = %q %s, want %s", rec.Header().Get("Content-Type"), rec.Body, tc.wantBody)
				}
				return
			}
			checkSameAsEdge(t, rec, tc.authz)
		})
	}
}

// checkSameAsEdge asserts that rec holds exactly the response problem.Write gives for err, so
// a denial cannot be told from the edge's own 401 or 404.
func checkSameAsEdge(t *testing.T, rec *httptest.ResponseRecorder, err error) {
	t.Helper()
	req := httptest.NewRequestWithContext(correlation.With(t.Context(), "req-1"), http.MethodGet, "/api/v1/instance", nil)
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
	if _, err := httpapi.New(httpapi.Deps{}); err == nil {
		t.Fatal("New without dependencies succeeded")
	}
	if _, err := httpapi.New(httpapi.Deps{Authorizer: &authorizetest.Authorizer{}}); err == nil {
		t.Fatal("New without an instance reader succeeded")
	}
}
