package problem_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"bothy.example.com/server/internal/kernel/problem"
)

func TestDeclaredResponseMatchesWriteByteForByte(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		statuses []int
		ok       bool
	}{
		{"declared not found", problem.ErrNotFound, []int{http.StatusNotFound}, true},
		{"declared validation", problem.Validation(problem.FieldError{Field: "handle", Message: "is taken"}), []int{http.StatusBadRequest}, true},
		{"undeclared forbidden", problem.ErrForbidden, []int{http.StatusNotFound}, false},
		{"unexpected error", errors.New("boom"), []int{http.StatusNotFound}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, ok := problem.Declared(ctx, tc.err, tc.statuses)
			if ok != tc.ok {
				t.Fatalf("Declared ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			got := httptest.NewRecorder()
			if err := r.Write(got); err != nil {
				t.Fatal(err)
			}
			want := httptest.NewRecorder()
			problem.Write(want, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil), tc.err)
			if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Fatalf("Response = %d %q %q, Write = %d %q %q", got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
			}
		})
	}
}
