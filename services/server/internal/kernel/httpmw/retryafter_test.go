package httpmw_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base time.Duration
		u    float64
		want int
	}{
		{2 * time.Second, 0, 2},
		{2 * time.Second, 0.5, 3},
		{2 * time.Second, 0.999, 4},
		{5 * time.Second, 0.1, 6}, // 5.5 rounds up
		{time.Second, 0, 1},       // the floor
		{100 * time.Millisecond, 0, 1},
		{2 * time.Second, -1, 2}, // u is clamped to [0, 1]
		{2 * time.Second, 7, 4},
	}
	for _, tc := range tests {
		if got := httpmw.RetryAfterSeconds(tc.base, tc.u); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v, %v) = %d, want %d", tc.base, tc.u, got, tc.want)
		}
	}
}

func TestRetryAfterOnEvery503(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"a 503 problem gets one", func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, problem.ErrUnavailable)
		}, "3"},
		{"a 503 with its own keeps it", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, "60"},
		{"a 500 gets none", func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, errors.New("boom"))
		}, ""},
		{"a 200 gets none", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("ok"))
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := httpmw.RetryAfter(2*time.Second, func() float64 { return 0.5 })(tc.handler)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil))
			if got := rec.Header().Get("Retry-After"); got != tc.want {
				t.Fatalf("Retry-After = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRetryAfterKeepsTheWriterReachable: http.ResponseController still reaches the
// connection through the wrapper (the gateway hijacks it, streams flush it).
func TestRetryAfterKeepsTheWriterReachable(t *testing.T) {
	t.Parallel()
	h := httpmw.RetryAfter(time.Second, func() float64 { return 0 })(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the wrapper: %v", err)
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil))
	if !rec.Flushed {
		t.Fatal("the recorder was not flushed")
	}
}
