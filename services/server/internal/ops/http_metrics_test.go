package ops_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"bothy.example.com/server/internal/ops"
)

func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := ops.NewHTTPMetrics(reg)
	if err != nil {
		t.Fatalf("NewHTTPMetrics: %v", err)
	}
	r := chi.NewRouter()
	r.Use(m.Middleware)
	r.Get("/things/{id}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	r.Get("/quiet", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok")) // implicit 200
	})

	requests := []struct{ method, path string }{
		{http.MethodGet, "/things/alex"},
		{http.MethodGet, "/things/sam"},
		{http.MethodGet, "/quiet"},
		{http.MethodGet, "/no/such/path/robin"},
		{"BREW", "/things/alex"},
	}
	for _, rq := range requests {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), rq.method, rq.path, nil))
	}

	want := `
# HELP bothy_http_requests_total HTTP requests served, by method, chi route pattern and status.
# TYPE bothy_http_requests_total counter
bothy_http_requests_total{method="GET",route="/quiet",status="200"} 1
bothy_http_requests_total{method="GET",route="/things/{id}",status="204"} 2
bothy_http_requests_total{method="GET",route="unmatched",status="404"} 1
bothy_http_requests_total{method="other",route="unmatched",status="405"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "bothy_http_requests_total"); err != nil {
		t.Fatalf("requests metric: %v", err)
	}
	n, err := testutil.GatherAndCount(reg, "bothy_http_request_duration_seconds")
	if err != nil {
		t.Fatalf("gather durations: %v", err)
	}
	if n != 4 {
		t.Fatalf("duration series = %d, want 4 (one per method and route)", n)
	}
}

func TestHTTPMetricsCountsPanics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := ops.NewHTTPMetrics(reg)
	if err != nil {
		t.Fatalf("NewHTTPMetrics: %v", err)
	}
	r := chi.NewRouter()
	r.Use(recoverer, m.Middleware)
	r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/boom", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500 from the outer recoverer", rec.Code)
	}
	want := `
# HELP bothy_http_requests_total HTTP requests served, by method, chi route pattern and status.
# TYPE bothy_http_requests_total counter
bothy_http_requests_total{method="GET",route="/boom",status="500"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "bothy_http_requests_total"); err != nil {
		t.Fatalf("requests metric: %v", err)
	}
}

func TestNewHTTPMetricsTwiceOnOneRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := ops.NewHTTPMetrics(reg); err != nil {
		t.Fatalf("first NewHTTPMetrics: %v", err)
	}
	if _, err := ops.NewHTTPMetrics(reg); err == nil {
		t.Fatal("second NewHTTPMetrics on the same registry succeeded, want a duplicate registration error")
	}
}

// recoverer stands in for httpmw.Recover: it turns a panic into a 500.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if recover() != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}
