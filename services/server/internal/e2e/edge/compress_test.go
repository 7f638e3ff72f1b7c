package edge

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/wiretest"
)

// rawResponse is a response read without the client's transparent decompression.
type rawResponse struct {
	status int
	header http.Header
	body   []byte // as it came over the wire
}

// getRaw sends GET path as the holder of token with the headers (name, value pairs) over a
// transport that does not decompress, so the test sees the bytes on the wire.
func getRaw(t *testing.T, base, token, path string, header ...string) rawResponse {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // net/http's documented type
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: body}
}

// decoded is the body a client reads: gunzipped when the response says gzip.
func (r rawResponse) decoded(t *testing.T) []byte {
	t.Helper()
	if r.header.Get("Content-Encoding") != "gzip" {
		return r.body
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// TestResponseCompression: with Accept-Encoding: gzip, the snapshot and a catch-up page come
// gzipped and decompress to exactly the identity answer, which validates against the API; the
// ETag, Cache-Control and X-Request-Id stay, Vary names Accept-Encoding, If-None-Match still
// answers 304 (uncompressed, no body), a short problem stays uncompressed, and the gateway,
// which no compression wraps, sends the same snapshot bytes in its ready frame to a client
// that asked for gzip on the upgrade.
func TestResponseCompression(t *testing.T) {
	t.Parallel()
	w := e2etest.GatewayWorld(t)
	base := w.Env.Server.URL
	for _, path := range []string{"/api/v1/sync/snapshot", "/api/v1/events?after=0"} {
		plain := getRaw(t, base, w.Sam.Token, path, "Accept-Encoding", "identity")
		gz := getRaw(t, base, w.Sam.Token, path, "Accept-Encoding", "gzip")
		if plain.status != http.StatusOK || gz.status != http.StatusOK {
			t.Fatalf("%s: status %d and %d", path, plain.status, gz.status)
		}
		if len(plain.body) < 1024 {
			t.Fatalf("%s: the world's answer has %d bytes, too few to be compressed", path, len(plain.body))
		}
		if plain.header.Get("Content-Encoding") != "" || gz.header.Get("Content-Encoding") != "gzip" || len(gz.body) >= len(plain.body) {
			t.Fatalf("%s: Content-Encoding %q and %q, %d and %d bytes", path,
				plain.header.Get("Content-Encoding"), gz.header.Get("Content-Encoding"), len(plain.body), len(gz.body))
		}
		if !bytes.Equal(gz.decoded(t), plain.body) {
			t.Fatalf("%s: the gzipped answer decompresses to other bytes", path)
		}
		for _, r := range []rawResponse{plain, gz} {
			if r.header.Get("Cache-Control") != e2etest.SyncCacheControl || r.header.Get("X-Request-Id") == "" ||
				!strings.Contains(r.header.Get("Vary"), "Accept-Encoding") || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s: headers %v", path, r.header)
			}
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := wiretest.Validate(t.Context(), req, gz.status, gz.header, gz.decoded(t)); err != nil {
			t.Fatalf("%s: the decompressed answer breaks the API: %v", path, err)
		}
	}

	snap := getRaw(t, base, w.Sam.Token, "/api/v1/sync/snapshot", "Accept-Encoding", "gzip")
	tag := snap.header.Get("ETag")
	if plain := getRaw(t, base, w.Sam.Token, "/api/v1/sync/snapshot"); tag == "" || plain.header.Get("ETag") != tag {
		t.Fatalf("ETag %q gzipped, %q not", tag, plain.header.Get("ETag"))
	}
	notModified := getRaw(t, base, w.Sam.Token, "/api/v1/sync/snapshot", "Accept-Encoding", "gzip", "If-None-Match", tag)
	if notModified.status != http.StatusNotModified || len(notModified.body) != 0 || notModified.header.Get("ETag") != tag ||
		notModified.header.Get("Content-Encoding") != "" || notModified.header.Get("Cache-Control") != e2etest.SyncCacheControl {
		t.Fatalf("If-None-Match: %d, headers %v, %d bytes", notModified.status, notModified.header, len(notModified.body))
	}

	unauthenticated := getRaw(t, base, "not-a-token", "/api/v1/sync/snapshot", "Accept-Encoding", "gzip")
	if unauthenticated.status != http.StatusUnauthorized || unauthenticated.header.Get("Content-Encoding") != "" ||
		!bytes.Contains(unauthenticated.body, []byte("unauthenticated")) {
		t.Fatalf("a short problem: %d, headers %v, body %s", unauthenticated.status, unauthenticated.header, unauthenticated.body)
	}

	c, refused, err := e2etest.DialGateway(t, base, w.Sam.Token, "Accept-Encoding", "gzip")
	if err != nil {
		t.Fatalf("dial the gateway asking for gzip: %v (status %d)", err, refused.Status)
	}
	c.Send(`{"op":"hello"}`)
	ready := c.Expect("ready")
	rest := getRaw(t, base, w.Sam.Token, "/api/v1/sync/snapshot", "Accept-Encoding", "gzip")
	if got, want := []byte(ready.Snapshot), bytes.TrimSuffix(rest.decoded(t), []byte("\n")); !bytes.Equal(got, want) {
		t.Fatalf("the ready frame's snapshot is not getSnapshot's body:\n%s\n%s", got, want)
	}
}
