package ops

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"

	"bothy.example.com/server/internal/apigen"
)

// metricsFormat is the Prometheus text exposition format (version 0.0.4),
// which every Prometheus-compatible scraper reads.
var metricsFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// GetMetrics answers the process's metrics in the Prometheus text format.
// The whole exposition is encoded before anything is written, so a failing
// collector becomes a clean 500 problem instead of a truncated 200.
func (s *Server) GetMetrics(_ context.Context, _ apigen.GetMetricsRequestObject) (apigen.GetMetricsResponseObject, error) {
	families, err := s.gatherer.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather metrics: %w", err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, metricsFormat)
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return nil, fmt.Errorf("encode metric family %s: %w", mf.GetName(), err)
		}
	}
	return metricsText(buf.Bytes()), nil
}

// metricsText is the 200 response of GetMetrics. It replaces the generated
// GetMetrics200TextResponse, which would send a bare text/plain without the
// format version scrapers use to pick a parser.
type metricsText []byte

// VisitGetMetricsResponse writes the exposition with its full content type.
func (m metricsText) VisitGetMetricsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", string(metricsFormat))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(m); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return nil
}
