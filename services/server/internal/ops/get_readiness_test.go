package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestGetReadiness(t *testing.T) {
	t.Parallel()
	leaky := "dial tcp 10.0.0.7:5432: authentication failed for user robin"
	tests := []struct {
		name       string
		readiness  *fakeReadiness
		wantStatus int
		wantDetail string // substring of the problem detail
		wantCalls  int    // port calls made (a failed ping skips the migration check)
	}{
		{
			name:       "ready",
			readiness:  &fakeReadiness{},
			wantStatus: 200,
			wantCalls:  2,
		},
		{
			name:       "database down",
			readiness:  &fakeReadiness{pingErr: errors.New(leaky)},
			wantStatus: 503,
			wantDetail: "database",
			wantCalls:  1,
		},
		{
			name:       "database hangs",
			readiness:  &fakeReadiness{block: true},
			wantStatus: 503,
			wantDetail: "database",
			wantCalls:  1,
		},
		{
			name:       "migrations pending",
			readiness:  &fakeReadiness{pending: 3},
			wantStatus: 503,
			wantDetail: "migrations are pending",
			wantCalls:  2,
		},
		{
			name:       "migration state unreadable",
			readiness:  &fakeReadiness{pendingErr: errors.New(leaky)},
			wantStatus: 503,
			wantDetail: "migration",
			wantCalls:  2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tc.readiness, nil)
			ctx := correlation.With(context.Background(), "req-alex-1")

			start := time.Now()
			resp, err := s.GetReadiness(ctx, apigen.GetReadinessRequestObject{})
			if err != nil {
				t.Fatalf("GetReadiness: %v", err)
			}
			if elapsed := time.Since(start); elapsed > 5*testTimeout {
				t.Fatalf("GetReadiness took %v, want about the readiness timeout %v", elapsed, testTimeout)
			}
			rec := httptest.NewRecorder()
			if err := resp.VisitGetReadinessResponse(rec); err != nil {
				t.Fatalf("write response: %v", err)
			}
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.wantStatus, rec.Body)
			}
			body := rec.Body.String()
			if strings.Contains(body, "null") {
				t.Fatalf("body has null: %s", body)
			}
			if strings.Contains(body, "10.0.0.7") || strings.Contains(body, "robin") {
				t.Fatalf("body leaks internals: %s", body)
			}
			if got := len(tc.readiness.deadlines); got != tc.wantCalls {
				t.Fatalf("port calls = %d, want %d", got, tc.wantCalls)
			}
			for i, d := range tc.readiness.deadlines {
				if d < 0 || d > testTimeout {
					t.Fatalf("call %d: deadline in %v, want within the readiness timeout %v", i, d, testTimeout)
				}
			}
			if tc.wantStatus == 200 {
				var got apigen.Readiness
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("decode readiness: %v", err)
				}
				want := apigen.Readiness{
					Status: apigen.ReadinessStatusReady,
					Checks: []apigen.ReadinessCheck{
						{Name: "database", Status: apigen.ReadinessCheckStatusOk},
						{Name: "migrations", Status: apigen.ReadinessCheckStatusOk},
					},
				}
				if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
					t.Fatalf("readiness = %s, want %s", g, w)
				}
				return
			}
			if ct := rec.Header().Get("Content-Type"); ct != problem.ContentType {
				t.Fatalf("content type = %q, want %q", ct, problem.ContentType)
			}
			var p problem.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("decode problem: %v", err)
			}
			if p.Code != "unavailable" || p.Status != 503 || p.Type != problem.TypePrefix+"unavailable" {
				t.Fatalf("problem = %+v, want unavailable 503", p)
			}
			if p.RequestID != "req-alex-1" {
				t.Fatalf("request_id = %q, want req-alex-1", p.RequestID)
			}
			if !strings.Contains(p.Detail, tc.wantDetail) {
				t.Fatalf("detail = %q, want it to mention %q", p.Detail, tc.wantDetail)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}
