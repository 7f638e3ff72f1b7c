package ops_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/apigen"
)

func TestGetMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "bothy_test_events_total", Help: "Events Sam sent."})
	reg.MustRegister(c)
	c.Add(3)
	s := newServer(t, &fakeReadiness{}, reg)

	resp, err := s.GetMetrics(context.Background(), apigen.GetMetricsRequestObject{})
	if err != nil {
		t.Fatalf("GetMetrics: %v", err)
	}
	rec := httptest.NewRecorder()
	if err := resp.VisitGetMetricsResponse(rec); err != nil {
		t.Fatalf("write response: %v", err)
	}
	if rec.Code != 200 {
		t.Fatalf("status = %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type = %q, want the Prometheus text format", ct)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"# HELP bothy_test_events_total Events Sam sent.",
		"# TYPE bothy_test_events_total counter",
		"bothy_test_events_total 3",
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("body lacks %q:\n%s", want, body)
		}
	}
}

func TestGetMetricsGatherError(t *testing.T) {
	t.Parallel()
	s := newServer(t, &fakeReadiness{}, failingGatherer{})

	resp, err := s.GetMetrics(context.Background(), apigen.GetMetricsRequestObject{})
	if err == nil {
		t.Fatalf("GetMetrics = %T, want an error (the edge turns it into a 500 problem)", resp)
	}
}
