package httpmw

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// RetryAfterDelay is how long a client an outage refused waits, for base
// (http.unavailable_retry_after) and u in [0, 1]: base plus a jitter of u times base, so
// between base and twice base. The jitter spreads the clients an outage refused at once over
// a window as long as the base, so that they do not all come back in the same second when
// the database returns. The gateway's retry_after_ms is this delay.
func RetryAfterDelay(base time.Duration, u float64) time.Duration {
	return time.Duration(float64(base) * (1 + min(max(u, 0), 1)))
}

// RetryAfterSeconds is the Retry-After of a 503: RetryAfterDelay in whole seconds, rounded
// up, never below 1.
func RetryAfterSeconds(base time.Duration, u float64) int {
	return max(1, int(math.Ceil(RetryAfterDelay(base, u).Seconds())))
}

// RetryAfter sets Retry-After (RetryAfterSeconds of base and a fresh jitter() in [0, 1)) on
// every 503 that carries none, so every 503 unavailable tells the client when to retry,
// whichever handler, middleware or typed response wrote it (spec 05). A handler that chose
// its own Retry-After keeps it. The wrapper unwraps to the underlying writer, so
// http.ResponseController (flush, hijack for WebSockets) still reaches the connection.
func RetryAfter(base time.Duration, jitter func() float64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&retryAfterWriter{ResponseWriter: w, base: base, jitter: jitter}, r)
		})
	}
}

// retryAfterWriter adds Retry-After to a 503 as its header is written.
type retryAfterWriter struct {
	http.ResponseWriter
	base   time.Duration
	jitter func() float64
}

func (w *retryAfterWriter) WriteHeader(code int) {
	if code == http.StatusServiceUnavailable {
		h := w.Header()
		if h.Get("Retry-After") == "" {
			h.Set("Retry-After", strconv.Itoa(RetryAfterSeconds(w.base, w.jitter())))
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets streaming handlers that assert http.Flusher keep working.
func (w *retryAfterWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
