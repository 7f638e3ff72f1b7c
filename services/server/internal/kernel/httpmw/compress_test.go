package httpmw_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
)

// compressMin is the threshold the compression tests mount with.
const compressMin = 1024

// bigJSON is a JSON body well above compressMin.
var bigJSON = []byte(`{"events":[` + strings.Repeat(`{"seq":1,"type":"message.created","payload":{"content_md":"Alex and Sam"}},`, 60) + `{}]}`)

// jsonHandler answers status with body as contentType, setting the headers the API's handlers
// set, writing the body in pieces of chunk bytes (0: one write).
func jsonHandler(status int, contentType string, body []byte, chunk int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body, chunk := body, chunk
		h := w.Header()
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		h.Set("ETag", `"Xq3v"`)
		h.Set("Cache-Control", "private, no-store")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		if chunk == 0 {
			chunk = len(body) + 1
		}
		for len(body) > 0 {
			n := min(chunk, len(body))
			_, _ = w.Write(body[:n])
			body = body[n:]
		}
	})
}

// serveCompressed sends a GET with the Accept-Encoding value (none when empty) through
// RequestID and Compress around h.
func serveCompressed(t *testing.T, h http.Handler, method, acceptEncoding string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, "/api/v1/sync/snapshot", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	httpmw.RequestID(httpmw.Compress(compressMin)(h)).ServeHTTP(rec, req)
	return rec
}

// gunzip decompresses body, failing the test when it is not gzip.
func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// TestCompressGzipsJSONWhenAsked: a JSON body above the threshold is gzipped for a request that
// accepts gzip, whether written at once or in small pieces; the handler's headers stay, but
// Content-Length, and Vary names Accept-Encoding.
func TestCompressGzipsJSONWhenAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, contentType, acceptEncoding string
		chunk                             int
	}{
		{"json at once", "application/json", "gzip, deflate, br", 0},
		{"json in pieces", "application/json", "gzip", 100},
		{"json byte by byte", "application/json", "gzip", 1},
		{"problem", problem.ContentType, "gzip", 0},
		{"with parameters", "application/json; charset=utf-8", "br;q=1.0, gzip;q=0.8", 0},
		{"x-gzip", "application/json", "x-gzip", 0},
		{"any coding", "application/json", "*", 0},
		{"upper case", "application/json", "GZIP", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := serveCompressed(t, jsonHandler(http.StatusOK, tc.contentType, bigJSON, tc.chunk), http.MethodGet, tc.acceptEncoding)
			h := rec.Header()
			if rec.Code != http.StatusOK || h.Get("Content-Encoding") != "gzip" || h.Get("Content-Length") != "" {
				t.Fatalf("status %d, headers %v; want 200 gzip without a length", rec.Code, h)
			}
			if h.Get("ETag") != `"Xq3v"` || h.Get("Cache-Control") != "private, no-store" || h.Get("Content-Type") != tc.contentType || h.Get("X-Request-Id") == "" {
				t.Fatalf("the handler's headers were not kept: %v", h)
			}
			if h.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Vary = %q", h.Values("Vary"))
			}
			if got := gunzip(t, rec.Body.Bytes()); !bytes.Equal(got, bigJSON) {
				t.Fatalf("the body does not decompress to what the handler wrote:\n%s", got)
			}
			if rec.Body.Len() >= len(bigJSON) {
				t.Fatalf("%d bytes compressed to %d", len(bigJSON), rec.Body.Len())
			}
		})
	}
}

// TestCompressLeavesAlone: the body goes out as the handler wrote it, with its Content-Length,
// when the client does not accept gzip, when it is short, when it is no JSON or already
// encoded, and for 204 and 304.
func TestCompressLeavesAlone(t *testing.T) {
	t.Parallel()
	small := []byte(`{"status":"ok"}`)
	for _, tc := range []struct {
		name, method, contentType, acceptEncoding string
		status                                    int
		body                                      []byte
	}{
		{"no Accept-Encoding", http.MethodGet, "application/json", "", http.StatusOK, bigJSON},
		{"gzip refused", http.MethodGet, "application/json", "gzip;q=0, deflate", http.StatusOK, bigJSON},
		{"gzip refused despite any", http.MethodGet, "application/json", "*, gzip;q=0", http.StatusOK, bigJSON},
		{"zero weight spelled long", http.MethodGet, "application/json", "gzip;q=0.000", http.StatusOK, bigJSON},
		{"a malformed weight", http.MethodGet, "application/json", "gzip;q=high", http.StatusOK, bigJSON},
		{"other codings only", http.MethodGet, "application/json", "br, deflate", http.StatusOK, bigJSON},
		{"identity", http.MethodGet, "application/json", "identity", http.StatusOK, bigJSON},
		{"below the threshold", http.MethodGet, "application/json", "gzip", http.StatusOK, small},
		{"exactly below the threshold", http.MethodGet, "application/json", "gzip", http.StatusOK, bytes.Repeat([]byte("a"), compressMin-1)},
		{"plain text", http.MethodGet, "text/plain; version=0.0.4", "gzip", http.StatusOK, bigJSON},
		{"no content type", http.MethodGet, "", "gzip", http.StatusOK, bigJSON},
		{"204", http.MethodGet, "application/json", "gzip", http.StatusNoContent, nil},
		{"304", http.MethodGet, "", "gzip", http.StatusNotModified, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := serveCompressed(t, jsonHandler(tc.status, tc.contentType, tc.body, 7), tc.method, tc.acceptEncoding)
			h := rec.Header()
			if rec.Code != tc.status || h.Get("Content-Encoding") != "" {
				t.Fatalf("status %d, Content-Encoding %q; want %d as it is", rec.Code, h.Get("Content-Encoding"), tc.status)
			}
			if !bytes.Equal(rec.Body.Bytes(), tc.body) && (len(tc.body) != 0 || rec.Body.Len() != 0) {
				t.Fatalf("body %q, want %q", rec.Body, tc.body)
			}
			if h.Get("Content-Length") != strconv.Itoa(len(tc.body)) || h.Get("ETag") != `"Xq3v"` || h.Get("Cache-Control") != "private, no-store" {
				t.Fatalf("the handler's headers were not kept: %v", h)
			}
			if h.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Vary = %q; a response that could vary by Accept-Encoding must say so", h.Values("Vary"))
			}
		})
	}
}

// TestCompressAlreadyEncoded: a handler that encoded its body itself keeps its coding.
func TestCompressAlreadyEncoded(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "br")
		_, _ = w.Write(bigJSON)
	})
	rec := serveCompressed(t, h, http.MethodGet, "gzip")
	if rec.Header().Get("Content-Encoding") != "br" || !bytes.Equal(rec.Body.Bytes(), bigJSON) {
		t.Fatalf("Content-Encoding %q; the body was changed", rec.Header().Get("Content-Encoding"))
	}
}

// TestCompressVaryOnce: Vary keeps what the handler set and names Accept-Encoding once.
func TestCompressVaryOnce(t *testing.T) {
	t.Parallel()
	for _, set := range []string{"Origin", "origin, accept-encoding", "*"} {
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Vary", set)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bigJSON)
		})
		rec := serveCompressed(t, h, http.MethodGet, "gzip")
		got := strings.Join(rec.Header().Values("Vary"), ", ")
		want := set
		if set == "Origin" {
			want = "Origin, Accept-Encoding"
		}
		if got != want {
			t.Errorf("handler's Vary %q: got %q, want %q", set, got, want)
		}
	}
}

// TestCompressImplicitStatus: a handler that writes without WriteHeader is a 200, compressed
// when long; one that writes nothing at all is left to net/http.
func TestCompressImplicitStatus(t *testing.T) {
	t.Parallel()
	rec := serveCompressed(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bigJSON)
	}), http.MethodGet, "gzip")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, rec.Body.Bytes()), bigJSON) {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	rec = serveCompressed(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), http.MethodGet, "gzip")
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Encoding") != "" {
		t.Fatalf("an empty handler: status %d, headers %v, body %q", rec.Code, rec.Header(), rec.Body)
	}
}

// TestCompressFlush: a flush sends what was written so far, compressed, and the rest follows
// in the same stream.
func TestCompressFlush(t *testing.T) {
	t.Parallel()
	rec := serveCompressed(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"a":`))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
		if !rec0Flushed(w) {
			t.Error("the flush did not reach the recorder")
		}
		_, _ = w.Write([]byte(`1}`))
	}), http.MethodGet, "gzip")
	if rec.Header().Get("Content-Encoding") != "gzip" || string(gunzip(t, rec.Body.Bytes())) != `{"a":1}` {
		t.Fatalf("headers %v", rec.Header())
	}
}

// rec0Flushed reports whether the recorder under w (through Unwrap) was flushed.
func rec0Flushed(w http.ResponseWriter) bool {
	for {
		switch u := w.(type) {
		case *httptest.ResponseRecorder:
			return u.Flushed
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
}

// TestCompressPanicLeavesTheAnswerToRecover: a handler that panics before its body went out
// leaves no status behind, so Recover answers 500 problem, uncompressed.
func TestCompressPanicLeavesTheAnswerToRecover(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"partial":`))
		panic("Robin's handler failed")
	})
	ctx := logging.With(t.Context(), slog.New(slog.DiscardHandler))
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/sync/snapshot", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	httpmw.Recover(httpmw.Compress(compressMin)(h)).ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != problem.ContentType ||
		rec.Header().Get("Content-Encoding") != "" || strings.Contains(rec.Body.String(), "partial") {
		t.Fatalf("status %d, headers %v, body %s", rec.Code, rec.Header(), rec.Body)
	}
}

// TestCompressOverHTTP: through a real server, a Go client (which asks for gzip by itself and
// decompresses) reads the handler's bytes; a client that asks for identity gets them as they
// are with their length.
func TestCompressOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(httpmw.Compress(compressMin)(jsonHandler(http.StatusOK, "application/json", bigJSON, 0)))
	defer srv.Close()
	for _, identity := range []bool{false, true} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if identity {
			req.Header.Set("Accept-Encoding", "identity")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || !bytes.Equal(body, bigJSON) {
			t.Fatalf("identity %v: body %q, %v", identity, body, err)
		}
		if resp.Uncompressed == identity || (identity && resp.ContentLength != int64(len(bigJSON))) {
			t.Fatalf("identity %v: uncompressed by the client %v, length %d", identity, resp.Uncompressed, resp.ContentLength)
		}
	}
}

func TestCompressRejectsNegativeMinimum(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("Compress(-1) did not panic")
		}
	}()
	httpmw.Compress(-1)
}

// largeJSON is a JSON body of about n bytes, varied enough that the compressor finds both
// matches and literals (a snapshot's ids), deterministic.
func largeJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"channels":[`)
	x := uint32(2166136261)
	for i := 0; b.Len() < n; i++ {
		x ^= uint32(i)
		x *= 16777619
		b.WriteString(`{"id":"` + strconv.FormatUint(uint64(x), 16) + `-4e1c-8a3f-` + strconv.Itoa(i) + `","name":"support-` + strconv.Itoa(i%97) + `","level":"member"},`)
	}
	b.WriteString(`{}]}`)
	return b.Bytes()
}

// TestCompressLargeBodies: bodies written in one large write, which is compressed in pieces
// at once, or in writes large and small mixed, with a flush between them, decompress to what
// the handler wrote (the reader checks the CRC-32 and the size), and still shrink about as
// much as written in one piece.
func TestCompressLargeBodies(t *testing.T) {
	t.Parallel()
	big := largeJSON(700 << 10)
	if n := httpmw.Pieces(len(big)); n < 2 && runtime.GOMAXPROCS(0) > 1 {
		t.Fatalf("a write of %d bytes is compressed in %d piece with %d processors", len(big), n, runtime.GOMAXPROCS(0))
	}
	if n := httpmw.Pieces(compressMin * 4); n != 1 {
		t.Fatalf("a write of %d bytes is compressed in %d pieces, want 1", compressMin*4, n)
	}
	for _, tc := range []struct {
		name  string
		sizes []int // the writes, in bytes of big; -1 flushes
	}{
		{"at once", []int{len(big)}},
		{"small, large, small", []int{100, 300 << 10, 50, len(big) - (300 << 10) - 150}},
		{"large, flush, large", []int{200 << 10, -1, len(big) - (200 << 10)}},
		{"small, flush, large", []int{5000, -1, len(big) - 5000}},
		{"just above the threshold", []int{128 << 10, len(big) - (128 << 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := serveCompressed(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				rest := big
				for _, n := range tc.sizes {
					if n < 0 {
						if err := http.NewResponseController(w).Flush(); err != nil {
							t.Errorf("Flush: %v", err)
						}
						continue
					}
					if _, err := w.Write(rest[:n]); err != nil {
						t.Errorf("Write: %v", err)
					}
					rest = rest[n:]
				}
				if len(rest) != 0 {
					t.Errorf("the test case leaves %d bytes unwritten", len(rest))
				}
			}), http.MethodGet, "gzip")
			if got := gunzip(t, rec.Body.Bytes()); !bytes.Equal(got, big) {
				t.Fatalf("the body does not decompress to what the handler wrote (%d bytes, want %d)", len(got), len(big))
			}
			var one bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&one, gzip.BestSpeed)
			_, _ = zw.Write(big)
			_ = zw.Close()
			if rec.Body.Len() > one.Len()*11/10 {
				t.Fatalf("%d bytes compressed to %d, compress/gzip at its fastest level makes %d", len(big), rec.Body.Len(), one.Len())
			}
		})
	}
}

// TestCompressHeadLikeGet: a HEAD gets the very headers of the GET (spec 05), Content-Encoding
// and Content-Length included, through a real net/http server, which sends no body for it.
func TestCompressHeadLikeGet(t *testing.T) {
	t.Parallel()
	for _, body := range [][]byte{bigJSON, []byte(`{"status":"ok"}`)} {
		srv := httptest.NewServer(httpmw.Compress(compressMin)(jsonHandler(http.StatusOK, "application/json", body, 0)))
		t.Cleanup(srv.Close)
		answer := func(method string) (http.Header, []byte) {
			req, err := http.NewRequestWithContext(t.Context(), method, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := srv.Client().Transport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Header.Del("Date")
			return resp.Header, b
		}
		getHeader, getBody := answer(http.MethodGet)
		headHeader, headBody := answer(http.MethodHead)
		if len(headBody) != 0 || len(getBody) == 0 {
			t.Fatalf("HEAD body %d bytes, GET body %d bytes", len(headBody), len(getBody))
		}
		if !reflect.DeepEqual(getHeader, headHeader) {
			t.Fatalf("HEAD headers %v differ from GET's %v", headHeader, getHeader)
		}
	}
}
