package problem

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"bothy.example.com/server/internal/kernel/logging"
)

// ContentType is the media type of every problem response.
const ContentType = "application/problem+json"

// Write answers the request with the problem of err (see From). For a 5xx it
// first logs the real error through logging.From(r.Context()) (the
// composition root's logger when it put one there, else slog.Default()):
// at error level for 500, warn for 503 (readiness probes repeat it), and info
// when err is context.Canceled because the client went away. The
// X-Request-Id header is set by httpmw.RequestID, not here.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	p := From(ctx, err)
	if p.Status >= http.StatusInternalServerError {
		logFailure(ctx, r, p, err)
	}
	WriteProblem(w, r, p)
}

// WriteProblem sends p as it is, without logging, for callers that already
// logged the failure (httpmw.Recover logs the panic with its stack).
func WriteProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	body, err := json.Marshal(p)
	if err != nil {
		// Only an extension can fail to encode; the standard members still can.
		logging.From(r.Context()).ErrorContext(r.Context(), "encode problem extensions", "error", err.Error(), "code", p.Code)
		p.Extensions = nil
		body, _ = json.Marshal(p)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Del("Content-Length")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

func logFailure(ctx context.Context, r *http.Request, p Problem, err error) {
	level := slog.LevelError
	switch {
	case errors.Is(err, context.Canceled):
		level = slog.LevelInfo
	case p.Status == http.StatusServiceUnavailable:
		level = slog.LevelWarn
	}
	msg := "request failed"
	text := "nil error"
	if err != nil {
		text = err.Error()
	}
	attrs := []slog.Attr{
		slog.String("error", text),
		slog.String("code", p.Code),
		slog.Int("status", p.Status),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
	}
	if p.RequestID != "" {
		attrs = append(attrs, slog.String(logging.KeyRequestID, p.RequestID))
	}
	logging.From(ctx).LogAttrs(ctx, level, msg, attrs...)
}
