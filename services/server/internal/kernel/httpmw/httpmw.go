// Package httpmw holds the HTTP middleware every bothy server runs, so that
// request ids, body limits, panic handling, access logs, CORS, idempotent
// retries and response compression behave the same on every route. The
// composition root chains them as Recover, RequestID, AccessLog, CORS,
// BodyLimit, then the router; Idempotency runs per operation, inside authentication, because the
// actor owns the key; Compress runs per operation too, outside all of them,
// and never around the WebSocket gateway. The bounds on abusive clients of
// ADR 0019 live here too: FailedAuth and the per-address LimitWrites run
// after the metrics, the per-token LimitWrites per operation between
// authentication and Idempotency, and LimitConnections wraps the listener.
package httpmw

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
)

// RequestID gives every request a correlation id: a valid incoming
// X-Request-Id is kept so callers can trace their own id, anything else is
// replaced by a new UUIDv7. The id is set on the response header before the
// handler runs (so even a panic response carries it) and in the context for
// logs and problem bodies.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(correlation.Header)
		if !correlation.Valid(id) {
			id = ids.New().String()
		}
		w.Header().Set(correlation.Header, id)
		next.ServeHTTP(w, r.WithContext(correlation.With(r.Context(), id)))
	})
}

// BodyLimit caps request bodies at max bytes (the http.max_body_bytes key).
// A request whose Content-Length already exceeds max gets a 413
// payload_too_large problem without its body being read; any other body is
// wrapped in http.MaxBytesReader, so a handler reading past max gets an
// *http.MaxBytesError that problem.Write also turns into 413. A max below
// zero is a wiring mistake and panics.
func BodyLimit(maxBytes int64) func(http.Handler) http.Handler {
	if maxBytes < 0 {
		panic(fmt.Sprintf("httpmw: BodyLimit(%d): negative limit", maxBytes))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > maxBytes {
				problem.Write(w, r, problem.New(problem.ErrPayloadTooLarge,
					fmt.Sprintf("The request body is larger than %d bytes.", maxBytes)))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Recover turns a panic in a handler into a 500 internal problem, so one bad
// request cannot kill the process. The panic value and stack are logged
// through logging.From at error level and never sent to the client. When the
// response had already started, the connection is aborted instead, so the
// client cannot mistake a truncated body for a complete one.
// http.ErrAbortHandler passes through untouched.
func Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			ctx := r.Context()
			// Recover runs outside RequestID, so the id is only on the response header.
			if correlation.From(ctx) == "" {
				if id := w.Header().Get(correlation.Header); correlation.Valid(id) {
					ctx = correlation.With(ctx, id)
				}
			}
			attrs := []slog.Attr{
				slog.String("panic", fmt.Sprint(v)),
				slog.String("stack", string(debug.Stack())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
			}
			if id := correlation.From(ctx); id != "" {
				attrs = append(attrs, slog.String(logging.KeyRequestID, id))
			}
			logging.From(ctx).LogAttrs(ctx, slog.LevelError, "panic in handler", attrs...)
			if rec.wroteHeader {
				panic(http.ErrAbortHandler)
			}
			// Drop what the handler set for its own answer (caching, length,
			// type); only the request id and the CORS headers (set by CORS
			// before the handler, so a browser can read this problem too)
			// belong on the problem.
			h := w.Header()
			for k := range h {
				if k != correlation.Header && !corsHeader(k) {
					delete(h, k)
				}
			}
			r = r.WithContext(ctx)
			problem.WriteProblem(w, r, problem.From(ctx, errPanic))
		}()
		next.ServeHTTP(rec, r)
	})
}

// errPanic stands for a recovered panic when mapping it to a problem; its
// text never reaches the client.
var errPanic = errors.New("handler panicked")

// AccessLog writes one JSON line per request through logger: method, path
// (never the query string, which may carry secrets; no headers, so never
// Authorization), status, bytes written, duration (nanoseconds, slog's
// encoding of a time.Duration) and request_id. A request whose handler
// panicked is logged with status 500, the answer Recover sends.
func AccessLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &recorder{ResponseWriter: w}
			completed := false
			defer func() {
				status := rec.status
				switch {
				case !completed:
					status = http.StatusInternalServerError
				case status == 0:
					status = http.StatusOK
				}
				ctx := r.Context()
				logger.LogAttrs(ctx, slog.LevelInfo, "http request",
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.Int("status", status),
					slog.Int64("bytes", rec.bytes),
					slog.Duration("duration", time.Since(start)),
					slog.String(logging.KeyRequestID, correlation.From(ctx)),
				)
			}()
			next.ServeHTTP(rec, r)
			completed = true
		})
	}
}

// recorder remembers the status and size of a response. It unwraps to the
// underlying writer, so http.ResponseController (flush, hijack for
// WebSockets, deadlines) still reaches the connection.
type recorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (w *recorder) WriteHeader(code int) {
	// 1xx other than 101 are informational and may precede the real status.
	if !w.wroteHeader && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers that assert http.Flusher keep working.
func (w *recorder) Flush() {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
