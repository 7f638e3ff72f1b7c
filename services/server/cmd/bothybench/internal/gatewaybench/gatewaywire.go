package gatewaybench

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // G505: RFC 6455 defines Sec-WebSocket-Accept with SHA-1; no security rests on it here.
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The benchmark's WebSocket client (RFC 6455), written for reading many connections cheaply:
// the gateway's cases measure the server, so the clients in the benchmark's own process (or
// its client process) must cost as little per frame as a client can. It dials and upgrades by
// hand over a net.Conn, sends masked frames (hello, and the answers to ping and close), and
// reads the server's frames through a bufio.Reader, keeping only the first bytes of each
// message (enough for the op and an event's seq) and skipping the rest without copying it
// anywhere else. It offers no extension (so the server compresses nothing and sets no RSV
// bit) and no subprotocol. It does not check that text messages are valid UTF-8: the seq is
// read from ASCII.

const (
	// wsReadBuffer is the size of each connection's read buffer: one read system call takes
	// up to this much of what the server wrote.
	wsReadBuffer = 16 << 10
	// wsGUID is RFC 6455's key suffix for Sec-WebSocket-Accept.
	wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
	// wsMaxControl is the largest payload of a control frame.
	wsMaxControl = 125
)

// The opcodes of RFC 6455, section 5.2.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// wsCloseError is the server's close frame: the connection ended with it (after the
// client echoed it).
type wsCloseError struct {
	Code   int // 1005 (no status) when the frame had no payload
	Reason string
}

func (e *wsCloseError) Error() string {
	return fmt.Sprintf("closed by the server: status %d %q", e.Code, e.Reason)
}

// errWSProtocol marks frames that break RFC 6455.
var errWSProtocol = errors.New("websocket protocol error")

// wsConn is one client connection. Reading (readMessage) and the writes it makes (pong,
// close) belong to one goroutine; close may be called from any.
type wsConn struct {
	conn net.Conn
	br   *bufio.Reader
	hdr  [14]byte           // a frame header being read or written
	ctrl [wsMaxControl]byte // a control frame's payload
	out  []byte             // a masked frame being written
}

// dialWS opens a WebSocket to rawURL (ws://host:port/path), with "Authorization: Bearer
// token" on the upgrade when token is not empty. It checks the server's 101 answer and its
// Sec-WebSocket-Accept.
func dialWS(ctx context.Context, rawURL, token string) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "ws" || u.Host == "" {
		return nil, fmt.Errorf("dial %s: not a ws:// URL", rawURL)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", rawURL, err)
	}
	// The upgrade is bounded by ctx: a deadline, and closing the connection when ctx ends.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	c, err := upgradeWS(conn, u, token)
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("dial %s: %w", rawURL, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return c, nil
}

// upgradeWS sends the upgrade request on conn and reads the answer.
func upgradeWS(conn net.Conn, u *url.URL, token string) (*wsConn, error) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	var req strings.Builder
	req.WriteString("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	req.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")
	req.WriteString("Sec-WebSocket-Key: " + key + "\r\n")
	if token != "" {
		req.WriteString("Authorization: Bearer " + token + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return nil, fmt.Errorf("send the upgrade: %w", err)
	}
	br := bufio.NewReaderSize(conn, wsReadBuffer)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet, URL: u})
	if err != nil {
		return nil, fmt.Errorf("read the upgrade's answer: %w", err)
	}
	// A 101 has no body; anything else is a refusal whose first bytes say why.
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("upgrade refused: status %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	sum := sha1.Sum([]byte(key + wsGUID)) //nolint:gosec // G401: see the import.
	switch {
	case !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket"):
		return nil, errors.New("upgrade answered without Upgrade: websocket")
	case resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]):
		return nil, errors.New("upgrade answered with a wrong Sec-WebSocket-Accept")
	case resp.Header.Get("Sec-WebSocket-Extensions") != "":
		return nil, errors.New("upgrade answered with an extension that was not offered")
	}
	// What the server wrote after its answer stays in br, read as frames.
	return &wsConn{conn: conn, br: br}, nil
}

// writeFrame writes one final, masked frame (RFC 6455 section 5.3: a client masks every
// frame).
func (c *wsConn) writeFrame(opcode byte, payload []byte) error {
	n := len(payload)
	out := append(c.out[:0], 0x80|opcode)
	switch {
	case n <= 125:
		out = append(out, 0x80|byte(n))
	case n <= 0xFFFF:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	out = append(out, mask[:]...)
	for i, b := range payload {
		out = append(out, b^mask[i%4])
	}
	c.out = out
	if _, err := c.conn.Write(out); err != nil {
		return fmt.Errorf("write a frame: %w", err)
	}
	return nil
}

// writeText sends one text message in one frame.
func (c *wsConn) writeText(msg []byte) error {
	return c.writeFrame(opText, msg)
}

// readMessage reads the next data message (text or binary, in one frame or several), answering
// the control frames before and between its frames: a ping with a pong of the same payload, a
// close by echoing its status and returning a *wsCloseError. It appends at most keep bytes of
// the message to buf[:0] and skips the rest, and returns the message's full length.
func (c *wsConn) readMessage(buf []byte, keep int) ([]byte, int64, error) {
	buf = buf[:0]
	var (
		total     int64
		inMessage bool
	)
	for {
		fin, opcode, n, err := c.readHeader()
		if err != nil {
			return buf, total, err
		}
		if opcode >= opClose {
			if err := c.control(opcode, n); err != nil {
				return buf, total, err
			}
			continue
		}
		switch {
		case opcode == opContinuation && !inMessage:
			return buf, total, fmt.Errorf("%w: a continuation frame outside a message", errWSProtocol)
		case (opcode == opText || opcode == opBinary) && inMessage:
			return buf, total, fmt.Errorf("%w: a new message inside a fragmented one", errWSProtocol)
		case opcode != opContinuation && opcode != opText && opcode != opBinary:
			return buf, total, fmt.Errorf("%w: reserved opcode %#x", errWSProtocol, opcode)
		}
		inMessage = true
		total += n
		if take := min(n, int64(max(keep-len(buf), 0))); take > 0 {
			start := len(buf)
			buf = slices.Grow(buf, int(take))[:start+int(take)]
			if _, err := io.ReadFull(c.br, buf[start:]); err != nil {
				return buf[:start], total, fmt.Errorf("read a frame: %w", err)
			}
			n -= take
		}
		if err := c.skip(n); err != nil {
			return buf, total, err
		}
		if fin {
			return buf, total, nil
		}
	}
}

// readHeader reads a frame's header: a server's frames are never masked and, without an
// extension, set no RSV bit; a control frame is final and carries at most 125 bytes.
func (c *wsConn) readHeader() (fin bool, opcode byte, n int64, err error) {
	h := c.hdr[:2]
	if _, err := io.ReadFull(c.br, h); err != nil {
		return false, 0, 0, fmt.Errorf("read a frame: %w", err)
	}
	fin, opcode = h[0]&0x80 != 0, h[0]&0x0F
	switch {
	case h[0]&0x70 != 0:
		return false, 0, 0, fmt.Errorf("%w: RSV bits %#x without an extension", errWSProtocol, h[0]&0x70)
	case h[1]&0x80 != 0:
		return false, 0, 0, fmt.Errorf("%w: a masked frame from the server", errWSProtocol)
	}
	n = int64(h[1] & 0x7F)
	switch n {
	case 126:
		if _, err := io.ReadFull(c.br, c.hdr[:2]); err != nil {
			return false, 0, 0, fmt.Errorf("read a frame: %w", err)
		}
		n = int64(binary.BigEndian.Uint16(c.hdr[:2]))
	case 127:
		if _, err := io.ReadFull(c.br, c.hdr[:8]); err != nil {
			return false, 0, 0, fmt.Errorf("read a frame: %w", err)
		}
		u := binary.BigEndian.Uint64(c.hdr[:8])
		if u>>63 != 0 {
			return false, 0, 0, fmt.Errorf("%w: a 64-bit length with its high bit set", errWSProtocol)
		}
		n = int64(u)
	}
	if opcode >= opClose && (!fin || n > wsMaxControl) {
		return false, 0, 0, fmt.Errorf("%w: a fragmented or long control frame", errWSProtocol)
	}
	return fin, opcode, n, nil
}

// control reads and answers a control frame of n bytes.
func (c *wsConn) control(opcode byte, n int64) error {
	p := c.ctrl[:n]
	if _, err := io.ReadFull(c.br, p); err != nil {
		return fmt.Errorf("read a control frame: %w", err)
	}
	switch opcode {
	case opPing:
		return c.writeFrame(opPong, p)
	case opPong:
		return nil
	case opClose:
		if n == 1 {
			return fmt.Errorf("%w: a close frame of one byte", errWSProtocol)
		}
		ce := &wsCloseError{Code: 1005}
		var echo []byte
		if n >= 2 {
			ce.Code, ce.Reason = int(binary.BigEndian.Uint16(p)), string(p[2:])
			echo = p[:2]
		}
		// The close handshake: echo the status; the server then closes the connection.
		if err := c.writeFrame(opClose, echo); err != nil {
			return errors.Join(ce, err)
		}
		return ce
	default:
		return fmt.Errorf("%w: reserved control opcode %#x", errWSProtocol, opcode)
	}
}

// skip discards n bytes of payload.
func (c *wsConn) skip(n int64) error {
	for n > 0 {
		step := int(min(n, 1<<30))
		d, err := c.br.Discard(step)
		n -= int64(d)
		if err != nil {
			return fmt.Errorf("read a frame: %w", err)
		}
	}
	return nil
}

// close closes the connection without a close handshake.
func (c *wsConn) close() error {
	return c.conn.Close()
}
