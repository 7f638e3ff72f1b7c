package ops

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// LimitMetrics count what the abuse bounds of ADR 0019 refused: requests
// refused by a rate limit, by the limit's name, and connections refused by
// http.max_connections; and they show the connections open.
type LimitMetrics struct {
	limited *prometheus.CounterVec
	refused prometheus.Counter
}

// NewLimitMetrics registers the metrics on reg; limits are the rate limits'
// names, whose series start at zero so a dashboard sees them before the
// first refusal. open reports the connections open (0 before the process
// listens).
func NewLimitMetrics(reg prometheus.Registerer, limits []string, open func() float64) (*LimitMetrics, error) {
	m := &LimitMetrics{
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bothy_http_rate_limited_total",
			Help: "HTTP requests answered 429 too_many_requests, by rate limit (token_writes, address_writes, failed_auth).",
		}, []string{"limit"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bothy_http_connections_refused_total",
			Help: "TCP connections answered 503 and closed because http.max_connections were open.",
		}),
	}
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "bothy_http_connections_open",
		Help: "TCP connections open on the HTTP listener, WebSockets included (at most http.max_connections).",
	}, open)
	for _, c := range []prometheus.Collector{m.limited, m.refused, gauge} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register limit metrics: %w", err)
		}
	}
	for _, l := range limits {
		m.limited.WithLabelValues(l)
	}
	return m, nil
}

// Limited counts one request refused by the named rate limit.
func (m *LimitMetrics) Limited(limit string) {
	m.limited.WithLabelValues(limit).Inc()
}

// ConnectionRefused counts one connection refused at the cap.
func (m *LimitMetrics) ConnectionRefused() {
	m.refused.Inc()
}
