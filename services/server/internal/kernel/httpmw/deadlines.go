package httpmw

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// Deadlines bounds the time one request may take to send its body
// (http.body_read_timeout) and to receive its response (http.write_timeout),
// so a client sending or reading at one byte a second cannot hold a
// connection and a goroutine for ever. They are per-request deadlines on the
// connection (http.ResponseController), not http.Server's ReadTimeout and
// WriteTimeout, which would apply to every request of the listener alike and
// stay on a connection the gateway hijacked: a WebSocket lives for hours.
//
// The body deadline starts when the handler starts and is cleared once the
// body was read to its end, so a handler that works long after reading a
// small body is not cut off (net/http's background read would otherwise hit
// the deadline and cancel the request's context). A request without a body
// gets no read deadline: header reading is bounded by
// http.read_header_timeout and waiting between requests by http.idle_timeout.
// A body not read to its end keeps the deadline while net/http discards the
// rest after the handler, so a slow body is cut then too.
//
// exempt picks the requests that manage their own deadlines (the gateway's
// upgrade, whose WebSocket uses gateway.write_timeout and its heartbeats):
// they get none, and the write deadline an earlier request on the same
// keep-alive connection left is cleared. A zero duration turns its deadline
// off.
func Deadlines(bodyRead, write time.Duration, exempt func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			if exempt != nil && exempt(r) {
				_ = rc.SetWriteDeadline(time.Time{})
				next.ServeHTTP(w, r)
				return
			}
			now := time.Now()
			if write > 0 {
				_ = rc.SetWriteDeadline(now.Add(write))
			}
			if bodyRead > 0 && r.Body != nil && r.Body != http.NoBody {
				if err := rc.SetReadDeadline(now.Add(bodyRead)); err == nil {
					r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody clears the connection's read deadline once the body was read
// to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}
