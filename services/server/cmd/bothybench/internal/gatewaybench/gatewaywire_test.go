package gatewaybench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // G505: RFC 6455's Sec-WebSocket-Accept.
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsTestServer serves one coder/websocket connection per request: it checks the bearer
// token, reads the client's hello, lets the connection answer control frames (CloseRead), then
// runs send and closes normally with "bye". What went wrong on its side comes back on errs.
func wsTestServer(t *testing.T, send func(ctx context.Context, c *websocket.Conn) error) (string, chan error) {
	t.Helper()
	errs := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer alex-token" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			errs <- err
			return
		}
		defer func() { _ = c.CloseNow() }()
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		typ, hello, err := c.Read(ctx)
		if err != nil || typ != websocket.MessageText || string(hello) != helloFrame {
			errs <- errors.Join(errors.New("no text hello from the client"), err)
			return
		}
		ctx = c.CloseRead(ctx)
		if err := send(ctx, c); err != nil {
			errs <- err
			return
		}
		// Close waits for the client's echo of the close frame.
		errs <- c.Close(websocket.StatusNormalClosure, "bye")
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/gateway", errs
}

// wsMessage is a message the client reads: the bytes it kept and the length.
type wsMessage struct {
	kept  string
	total int64
}

func TestWSClientAgainstCoderWebsocket(t *testing.T) {
	t.Parallel()
	long16 := strings.Repeat("s", 300)    // a 16-bit length
	long64 := strings.Repeat("r", 70_000) // a 64-bit length
	event := `{"op":"event","event":{"seq":42,"type":"message.created"` + strings.Repeat(" ", 900) + `}}`
	write := func(typ websocket.MessageType, msgs ...string) func(ctx context.Context, c *websocket.Conn) error {
		return func(ctx context.Context, c *websocket.Conn) error {
			for _, m := range msgs {
				if err := c.Write(ctx, typ, []byte(m)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name string
		send func(ctx context.Context, c *websocket.Conn) error
		keep int
		want []wsMessage
	}{
		{name: "short messages", send: write(websocket.MessageText, `{"op":"ready"}`, "x"), keep: 64,
			want: []wsMessage{{`{"op":"ready"}`, 14}, {"x", 1}}},
		{name: "16- and 64-bit lengths, kept in part", send: write(websocket.MessageText, long16, long64, "after"), keep: 10,
			want: []wsMessage{{long16[:10], 300}, {long64[:10], 70_000}, {"after", 5}}},
		{name: "a 64-bit length kept whole", send: write(websocket.MessageBinary, long64), keep: clientReadLimit,
			want: []wsMessage{{long64, 70_000}}},
		{name: "an event frame", send: write(websocket.MessageText, event), keep: eventKeep,
			want: []wsMessage{{event[:eventKeep], int64(len(event))}}},
		{name: "fragments with pings between them", keep: 64, send: func(ctx context.Context, c *websocket.Conn) error {
			if err := c.Ping(ctx); err != nil { // before any message
				return err
			}
			w, err := c.Writer(ctx, websocket.MessageText)
			if err != nil {
				return err
			}
			for _, part := range []string{`{"op":"ev`, `ent","event":{"seq":`, long16, `7}}`} {
				if _, err := w.Write([]byte(part)); err != nil {
					return err
				}
				// A ping between the fragments: Ping returns once the client's pong (with
				// the same payload) arrived.
				if err := c.Ping(ctx); err != nil {
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			return c.Write(ctx, websocket.MessageText, []byte("next"))
		}, want: []wsMessage{{(`{"op":"event","event":{"seq":` + long16)[:64], int64(29 + 300 + 3)}, {"next", 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, errs := wsTestServer(t, tc.send)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			c, err := dialWS(ctx, url, "alex-token")
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer func() { _ = c.close() }()
			if err := c.writeText([]byte(helloFrame)); err != nil {
				t.Fatalf("hello: %v", err)
			}
			var buf []byte
			for i, want := range tc.want {
				var total int64
				buf, total, err = c.readMessage(buf, tc.keep)
				if err != nil {
					t.Fatalf("message %d: %v", i+1, err)
				}
				if string(buf) != want.kept || total != want.total {
					t.Fatalf("message %d: kept %.80q of %d bytes, want %.80q of %d", i+1, buf, total, want.kept, want.total)
				}
			}
			// Then the server's close frame, which the client echoes.
			_, _, err = c.readMessage(buf, tc.keep)
			var ce *wsCloseError
			if !errors.As(err, &ce) || ce.Code != int(websocket.StatusNormalClosure) || ce.Reason != "bye" {
				t.Fatalf("after the messages: %v, want the close frame 1000 bye", err)
			}
			if err := <-errs; err != nil {
				t.Fatalf("server: %v", err)
			}
		})
	}
}

func TestWSClientDialRefused(t *testing.T) {
	t.Parallel()
	url, _ := wsTestServer(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := dialWS(ctx, url, "sam-token"); err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Fatalf("dial with a wrong token: %v, want status 401", err)
	}
	if _, err := dialWS(ctx, "http://example.com/", ""); err == nil {
		t.Fatal("dial of an http:// URL succeeded")
	}
}

// writeRecorder is a net.Conn that keeps what is written to it.
type writeRecorder struct {
	net.Conn
	written bytes.Buffer
}

func (w *writeRecorder) Write(p []byte) (int, error) { return w.written.Write(p) }

// unmask decodes the client frames in raw (masked, at most 125 bytes each) into opcode and
// payload pairs.
func unmask(t *testing.T, raw []byte) []wsFrame {
	t.Helper()
	var out []wsFrame
	for len(raw) > 0 {
		if len(raw) < 6 || raw[1]&0x80 == 0 || raw[1]&0x7F > 125 {
			t.Fatalf("not a short masked frame: %x", raw)
		}
		n := int(raw[1] & 0x7F)
		mask, p := raw[2:6], bytes.Clone(raw[6:6+n])
		for i := range p {
			p[i] ^= mask[i%4]
		}
		out = append(out, wsFrame{raw[0], string(p)})
		raw = raw[6+n:]
	}
	return out
}

// wsFrame is a frame's first byte and its payload.
type wsFrame struct {
	b0      byte
	payload string
}

func TestWSClientFrames(t *testing.T) {
	t.Parallel()
	frame := func(b0 byte, payload string) string {
		return string([]byte{b0, byte(len(payload))}) + payload //nolint:gosec // G115: the cases' payloads are short.
	}
	for _, tc := range []struct {
		name    string
		in      string
		want    string // the kept bytes of the first message
		err     string // or the error
		written []wsFrame
	}{
		{name: "a text frame", in: frame(0x81, "hi"), want: "hi"},
		{name: "fragments with a ping between", in: frame(0x01, "a") + frame(0x89, "p1") + frame(0x00, "b") + frame(0x80, "c"), want: "abc",
			written: []wsFrame{{0x8A, "p1"}}},
		{name: "a pong is ignored", in: frame(0x8A, "x") + frame(0x82, "bin"), want: "bin"},
		{name: "a close with a status", in: frame(0x88, "\x03\xe8bye"), err: `status 1000 "bye"`, written: []wsFrame{{0x88, "\x03\xe8"}}},
		{name: "a close without one", in: frame(0x88, ""), err: "status 1005", written: []wsFrame{{0x88, ""}}},
		{name: "a close of one byte", in: frame(0x88, "\x03"), err: "close frame of one byte"},
		{name: "a masked frame", in: string([]byte{0x81, 0x81, 1, 2, 3, 4, 'x'}), err: "masked frame"},
		{name: "RSV bits", in: frame(0xC1, "x"), err: "RSV bits"},
		{name: "a fragmented ping", in: frame(0x09, "x"), err: "control frame"},
		{name: "a long ping", in: string([]byte{0x89, 126, 0, 126}) + strings.Repeat("x", 126), err: "control frame"},
		{name: "a continuation first", in: frame(0x80, "x"), err: "continuation frame outside"},
		{name: "a message inside a message", in: frame(0x01, "a") + frame(0x81, "b"), err: "new message inside"},
		{name: "a reserved opcode", in: frame(0x83, "x"), err: "reserved opcode"},
		{name: "a reserved control opcode", in: frame(0x8B, "x"), err: "reserved control opcode"},
		{name: "a 64-bit length with the high bit", in: string([]byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 1}), err: "high bit"},
		{name: "a truncated frame", in: string([]byte{0x81, 5}) + "ab", err: "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &writeRecorder{}
			c := &wsConn{conn: rec, br: bufio.NewReader(strings.NewReader(tc.in))}
			got, _, err := c.readMessage(nil, 64)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("err = %v, want %q", err, tc.err)
			case tc.err == "" && (err != nil || string(got) != tc.want):
				t.Fatalf("read %q, %v; want %q", got, err, tc.want)
			}
			written := unmask(t, rec.written.Bytes())
			if len(written) != len(tc.written) {
				t.Fatalf("wrote %q, want %q", written, tc.written)
			}
			for i := range written {
				if written[i] != tc.written[i] {
					t.Fatalf("wrote %q, want %q", written, tc.written)
				}
			}
		})
	}
}

func TestEventSeq(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		frame string
		seq   int64
		ok    bool
	}{
		{`{"op":"event","event":{"seq":1234,"type":"x"}}`, 1234, true},
		{`{"op":"event","event":{"seq":7,`, 7, true},
		{`{"op":"event","event":{"seq":,`, 0, false},
		{`{"op":"event","event":{"seq":12a,`, 0, false},
		{`{"op":"event","event":{"seq":99999999999999999999,`, 0, false},
		{`{"op":"event","event":{"seq":12`, 0, false},
		{`{"op":"ready","snapshot":{}}`, 0, false},
	} {
		seq, ok := eventSeq([]byte(tc.frame))
		if seq != tc.seq && ok || ok != tc.ok {
			t.Errorf("eventSeq(%q) = %d, %v; want %d, %v", tc.frame, seq, ok, tc.seq, tc.ok)
		}
	}
}

// frameServer answers a WebSocket upgrade by hand and then writes frames, the same event frame
// over and over, 64 to a write, until the connection ends: a server that costs next to
// nothing per frame, so that BenchmarkClientRead measures the client.
func frameServer(b *testing.B, frame []byte) string {
	b.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(b.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	one := binary.BigEndian.AppendUint16([]byte{0x81, 126}, uint16(len(frame))) //nolint:gosec // G115: the frame is under 64 KiB.
	one = append(one, frame...)
	burst := bytes.Repeat(one, 64)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + wsGUID)) //nolint:gosec // G401: RFC 6455.
				if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
					"Sec-WebSocket-Accept: "+base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n"); err != nil {
					return
				}
				for {
					if _, err := conn.Write(burst); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

// BenchmarkClientRead reads event frames (ns/op and allocs/op are per frame) with the
// benchmark's client and, for comparison, with the github.com/coder/websocket client read as
// the benchmark read it before (Reader, then Read to EOF into a reused buffer).
func BenchmarkClientRead(b *testing.B) {
	frame := []byte(`{"op":"event","event":{"seq":123456,"type":"message.created"` + strings.Repeat(" ", 760) + `}}`)
	b.Run("wsConn", func(b *testing.B) {
		url := frameServer(b, frame)
		c, err := dialWS(b.Context(), url, "")
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = c.close() }()
		b.ReportAllocs()
		b.SetBytes(int64(len(frame)))
		var buf []byte
		for b.Loop() {
			if buf, _, err = c.readMessage(buf, eventKeep); err != nil {
				b.Fatal(err)
			}
			if _, ok := eventSeq(buf); !ok {
				b.Fatalf("not an event: %q", buf)
			}
		}
	})
	b.Run("coder-websocket", func(b *testing.B) {
		url := frameServer(b, frame)
		c, _, err := websocket.Dial(b.Context(), url, nil) //nolint:bodyclose // a 101 has no body to close.
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = c.CloseNow() }()
		b.ReportAllocs()
		b.SetBytes(int64(len(frame)))
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			_, r, err := c.Reader(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			buf = buf[:0]
			for {
				if len(buf) == cap(buf) {
					buf = append(buf, 0)[:len(buf)]
				}
				n, err := r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if _, ok := eventSeq(buf); !ok {
				b.Fatalf("not an event: %q", buf)
			}
		}
	})
}
