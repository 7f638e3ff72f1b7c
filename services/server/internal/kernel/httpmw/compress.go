package httpmw

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/flate"
)

// gzipLevel is the compression level of Compress: flate.BestSpeed, because the server spends
// the CPU on every response while the wire saves most of the bytes already at level 1 (a
// snapshot's JSON shrinks about tenfold). The deflate encoder is github.com/klauspost/compress's,
// whose fastest level takes about half the standard library's time for a snapshot, with
// slightly smaller output; gzipStream frames it as gzip, which any gzip decoder reads.
const gzipLevel = flate.BestSpeed

// spareWriters is how many idle gzip writers the process keeps.
const spareWriters = 16

// gzipWriters keeps idle gzip streams for reuse: each holds about 800 KiB of compressor state,
// which a new one allocates and clears again. It is a bounded free list rather than a
// sync.Pool, which every garbage collection empties: a server that collects about once per
// large response would allocate a writer for nearly every one (make bench's snapshot).
var gzipWriters = make(chan *gzipStream, spareWriters)

// getGzip returns an idle stream, or a new one, writing to w.
func getGzip(w io.Writer) *gzipStream {
	select {
	case gz := <-gzipWriters:
		gz.Reset(w)
		return gz
	default:
		gz := newGzipStream()
		gz.Reset(w)
		return gz
	}
}

// putGzip keeps gz for reuse unless spareWriters are idle already.
func putGzip(gz *gzipStream) {
	gz.Reset(io.Discard)
	select {
	case gzipWriters <- gz:
	default:
	}
}

// Compress gzips JSON responses (application/json and application/problem+json) for requests
// whose Accept-Encoding accepts gzip (RFC 9110: gzip or x-gzip, or *, with a q-value above 0).
// It mounts around the API's operations, never around the WebSocket gateway, which hijacks its
// connection. A compressed response gets Content-Encoding: gzip and loses its Content-Length;
// every other header the handler set (X-Request-Id, ETag, Cache-Control, Location,
// Idempotency-Replayed) is kept as it is. Every response it sees gets Vary: Accept-Encoding,
// since another request's Accept-Encoding may get the other coding. A HEAD is compressed as
// its GET is, so its headers (Content-Encoding, Content-Length) are the GET's (spec 05); net/http
// sends no body for it. It leaves alone an informational status, 204 and 304 (no body), a
// response the handler encoded already, and a body shorter than minSize bytes, which it holds back until it knows its size
// (gzip would add more than it saves). The handler's writes are compressed as they come: the
// body is never held whole. A negative minSize is a wiring mistake and panics.
func Compress(minSize int) func(http.Handler) http.Handler {
	if minSize < 0 {
		panic("httpmw: Compress: negative minimum size " + strconv.Itoa(minSize))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cw := &compressWriter{ResponseWriter: w, minSize: minSize, accepts: acceptsGzip(r.Header)}
			next.ServeHTTP(cw, r)
			cw.finish()
		})
	}
}

// The states of a compressWriter.
const (
	stateNew        = iota // no final status yet
	stateHolding           // a compressible status and type: the body is held until minSize
	statePassing           // sent as the handler writes it
	stateCompressed        // gzipped into the response
)

// compressWriter decides at the final status whether the response can be compressed, holds
// back its first bytes until there are minSize of them, and then gzips the rest as it comes.
type compressWriter struct {
	http.ResponseWriter
	minSize int
	accepts bool
	state   int
	status  int
	held    []byte
	gz      *gzipStream
}

// WriteHeader implements http.ResponseWriter. A final status decides the coding; an
// informational one goes out at once.
func (w *compressWriter) WriteHeader(code int) {
	if w.state != stateNew {
		// A second final status is the handler's mistake; net/http reports it.
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if code < http.StatusOK {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
	addVary(w.Header(), "Accept-Encoding")
	if w.accepts && bodyAllowed(code) && compressible(w.Header()) {
		w.state = stateHolding
		return
	}
	w.state = statePassing
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter. It never keeps p: held bytes are copied.
func (w *compressWriter) Write(p []byte) (int, error) {
	if w.state == stateNew {
		w.WriteHeader(http.StatusOK)
	}
	switch w.state {
	case stateHolding:
		if len(w.held)+len(p) < w.minSize {
			w.held = append(w.held, p...)
			return len(p), nil
		}
		if err := w.startGzip(); err != nil {
			return 0, err
		}
		return w.gz.Write(p)
	case stateCompressed:
		return w.gz.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher: what the handler wrote so far goes out, compressed when the
// response is, however short it is.
func (w *compressWriter) Flush() {
	if w.state == stateNew {
		w.WriteHeader(http.StatusOK)
	}
	if w.state == stateHolding {
		if err := w.startGzip(); err != nil {
			return
		}
	}
	if w.state == stateCompressed {
		if err := w.gz.Flush(); err != nil {
			return
		}
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startGzip sends the status with Content-Encoding: gzip, then the held bytes into the
// compressor.
func (w *compressWriter) startGzip() error {
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	w.gz = getGzip(w.ResponseWriter)
	w.state = stateCompressed
	held := w.held
	w.held = nil
	_, err := w.gz.Write(held)
	return err
}

// finish ends the response once the handler returned: a held body goes out as it is, a
// compressed one gets its gzip trailer. A handler that panicked never gets here: its held
// bytes are dropped, so Recover can still answer 500.
func (w *compressWriter) finish() {
	switch w.state {
	case stateHolding:
		w.ResponseWriter.WriteHeader(w.status)
		if len(w.held) > 0 {
			_, _ = w.ResponseWriter.Write(w.held)
		}
	case stateCompressed:
		_ = w.gz.Close()
		putGzip(w.gz)
		w.gz = nil
	}
}

// bodyAllowed reports whether a response with code carries a body.
func bodyAllowed(code int) bool {
	return code != http.StatusNoContent && code != http.StatusNotModified
}

// compressible reports whether the response is JSON the handler has not encoded already.
func compressible(h http.Header) bool {
	if h.Get("Content-Encoding") != "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (mt == "application/json" || mt == "application/problem+json")
}

// addVary adds field to the Vary header unless it names it (or *) already. The header stays
// one line ("Origin, Accept-Encoding"), which every cache reads alike and a client's
// Header.Get sees whole.
func addVary(h http.Header, field string) {
	values := h.Values("Vary")
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, field) {
				return
			}
		}
	}
	h.Set("Vary", strings.Join(append(values, field), ", "))
}

// acceptsGzip reports whether the request's Accept-Encoding accepts gzip (RFC 9110, 12.5.3):
// gzip or x-gzip with a q-value above 0, or, when neither is named, * with one. No header
// means no preference, and then the server sends the body as it is.
func acceptsGzip(h http.Header) bool {
	named, wildcard := -1.0, -1.0
	for _, v := range h.Values("Accept-Encoding") {
		for f := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(f, ";")
			q := qValue(params)
			switch coding = strings.TrimSpace(coding); {
			case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
				named = max(named, q)
			case coding == "*":
				wildcard = max(wildcard, q)
			}
		}
	}
	if named >= 0 {
		return named > 0
	}
	return wildcard > 0
}

// qValue returns the q parameter among params (1 when absent, 0 when malformed, so that a
// garbled weight never turns compression on).
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || q < 0 || q > 1 {
			return 0
		}
		return q
	}
	return 1
}
