package ops

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// unmatchedRoute labels requests no route matched (404, 405), so probing
// random paths cannot create new series.
const unmatchedRoute = "unmatched"

// otherMethod labels requests with a method outside the standard set, for
// the same reason.
const otherMethod = "other"

// knownMethods are the methods that keep their own label value.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true,
	http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true,
	http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

// HTTPMetrics counts and times HTTP requests by method, chi route pattern
// and status. Route patterns (/threads/{thread_id}/messages), never raw
// paths, keep the number of series bounded by the API's size.
type HTTPMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewHTTPMetrics registers the HTTP metrics on reg. It fails when they are
// registered already, which means two middlewares would count each request.
func NewHTTPMetrics(reg prometheus.Registerer) (*HTTPMetrics, error) {
	m := &HTTPMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bothy_http_requests_total",
			Help: "HTTP requests served, by method, chi route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bothy_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method and chi route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register http metrics: %w", err)
		}
	}
	return m, nil
}

// Middleware records every request that passes through it. It must be
// installed with Use on the chi router (not around it), because the route
// pattern is known only inside chi's routing context, after routing. A
// panicking handler is counted as a 500 and the panic continues to the
// recovering middleware outside.
func (m *HTTPMetrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		panicked := true
		defer func() {
			status := ww.Status()
			switch {
			case panicked:
				status = http.StatusInternalServerError
			case status == 0:
				// Nothing written: net/http answers 200 with an empty body.
				status = http.StatusOK
			}
			m.observe(r, status, time.Since(start))
		}()
		next.ServeHTTP(ww, r)
		panicked = false
	})
}

func (m *HTTPMetrics) observe(r *http.Request, status int, d time.Duration) {
	method := r.Method
	if !knownMethods[method] {
		method = otherMethod
	}
	route := unmatchedRoute
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		if p := rctx.RoutePattern(); p != "" {
			route = p
		}
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}
