package httpmw_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/httpmw"
)

func TestLimitConnections(t *testing.T) {
	t.Parallel()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	limited := httpmw.LimitConnections(ln, 1, time.Second, func() { refused.Add(1) })
	t.Cleanup(func() { _ = limited.Close() })
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := limited.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var d net.Dialer
	dial := func() net.Conn {
		c, err := d.DialContext(t.Context(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	first := dial()
	server := <-accepted
	if _, ok := server.(interface{ CloseWrite() error }); !ok {
		t.Fatal("an accepted connection hides CloseWrite, which net/http uses for a clean close")
	}
	if limited.Open() != 1 {
		t.Fatalf("Open = %d, want 1", limited.Open())
	}

	second := dial()
	if _, err := second.Write([]byte("GET / HTTP/1.1\r\nHost: bothy\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil {
		t.Fatalf("the refused connection got no response: %v", err)
	}
	var body struct {
		RequestID string `json:"request_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("the refusal's body: %v", err)
	}
	_ = resp.Body.Close()
	if body.RequestID != resp.Header.Get(correlation.Header) {
		t.Fatalf("the refusal's problem names request %q, its header %q", body.RequestID, resp.Header.Get(correlation.Header))
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
		resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close {
		t.Fatalf("refusal: %d %v, want 503 problem, Retry-After, Connection: close", resp.StatusCode, resp.Header)
	}
	if id := resp.Header.Get(correlation.Header); !correlation.Valid(id) {
		t.Fatalf("the refusal's %s is %q, want a request id like every response's (spec 05)", correlation.Header, id)
	}
	if refused.Load() != 1 {
		t.Fatalf("refused %d, want 1", refused.Load())
	}

	_ = server.Close()
	_ = server.Close() // a second close gives nothing back twice
	if limited.Open() != 0 {
		t.Fatalf("after the close Open = %d, want 0", limited.Open())
	}
	_ = first.Close()
	dial()
	select {
	case c := <-accepted:
		_ = c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("a connection within the cap again was not accepted")
	}
}
