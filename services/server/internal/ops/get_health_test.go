package ops_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"bothy.example.com/server/internal/apigen"
)

func TestGetHealth(t *testing.T) {
	t.Parallel()
	s := newServer(t, &fakeReadiness{}, nil)

	resp, err := s.GetHealth(context.Background(), apigen.GetHealthRequestObject{})
	if err != nil {
		t.Fatalf("GetHealth: %v", err)
	}
	rec := httptest.NewRecorder()
	if err := resp.VisitGetHealthResponse(rec); err != nil {
		t.Fatalf("write response: %v", err)
	}
	if rec.Code != 200 {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	if got, want := rec.Body.String(), "{\"status\":\"ok\"}\n"; got != want {
		t.Fatalf("body = %q, want %q", got, want)
	}
}
