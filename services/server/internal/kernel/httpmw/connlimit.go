package httpmw

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/ids"
)

// ConnLimit is a listener that keeps at most a fixed number of connections
// open at once (http.max_connections), WebSockets the gateway hijacked
// included: each is counted from Accept until it is closed. A connection
// beyond the cap is answered at once with a bare 503 problem, Retry-After
// and Connection: close, and closed, instead of waiting unserved in the
// kernel's accept queue as with a blocking limit; the client retries later
// or elsewhere. netutil.LimitListener blocks instead, which holds the
// refused clients in the dark until their own timeouts.
type ConnLimit struct {
	net.Listener
	max     int64
	linger  time.Duration
	refused func()

	open      atomic.Int64
	lingering atomic.Int64
}

// LimitConnections wraps ln. linger bounds how long a refused connection is
// kept to let its client read the 503 before the close (the server uses
// http.read_header_timeout: as long as it would wait for a request's
// headers); at most max refused connections linger at once, others are
// closed at once. refused, when not nil, is called for every refusal (the
// metrics).
func LimitConnections(ln net.Listener, maxConns int, linger time.Duration, refused func()) *ConnLimit {
	return &ConnLimit{Listener: ln, max: int64(maxConns), linger: linger, refused: refused}
}

// Open returns how many accepted connections are open (the metrics' gauge).
func (l *ConnLimit) Open() int64 { return l.open.Load() }

// Accept returns the next connection within the cap, refusing those beyond.
func (l *ConnLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			if l.refused != nil {
				l.refused()
			}
			l.refuse(c)
			continue
		}
		return &limitedConn{Conn: c, limit: l}, nil
	}
}

// refusedBody is the problem a refused connection gets (RFC 9457, as every
// error of the API; problem.Write needs a request, which was not read),
// with the request id of its answer.
const refusedBody = `{"type":"urn:bothy:problem:unavailable","title":"Unavailable","status":503,` +
	`"code":"unavailable","detail":"The server has too many open connections. Retry later.","request_id":"%s"}`

// refusedResponse is the whole answer to a refused connection. Its request
// was not read, so the request id is always a new one (spec 05: every
// response carries X-Request-Id).
func refusedResponse() []byte {
	id := ids.New().String()
	body := fmt.Sprintf(refusedBody, id)
	return []byte("HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: application/problem+json\r\n" +
		"Retry-After: 1\r\n" +
		correlation.Header + ": " + id + "\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// refuse answers c with the 503 and closes it. The write goes first and
// then the sending half is closed, and whatever the client sends is read
// until it closes too (or linger passes): closing a socket with unread
// request bytes would reset the connection and could destroy the 503 before
// the client read it.
func (l *ConnLimit) refuse(c net.Conn) {
	if l.lingering.Add(1) > l.max {
		l.lingering.Add(-1)
		_ = c.Close()
		return
	}
	go func() {
		defer l.lingering.Add(-1)
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(l.linger))
		if _, err := c.Write(refusedResponse()); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		var buf [512]byte
		for {
			if _, err := c.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}

// limitedConn gives its slot back once, on the first Close.
type limitedConn struct {
	net.Conn
	once  sync.Once
	limit *ConnLimit
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.limit.open.Add(-1) })
	return err
}

// CloseWrite passes net/http's half close through: after an answer that
// leaves request bytes unread (a 413), the server closes its sending half
// and waits a moment before the close, so the client reads the answer
// instead of a reset. Hidden behind the wrapper, the server would close at
// once.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
