package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	gosync "sync"
	"time"
)

// The buffers a connection keeps for its whole life. The library keeps the bufio.Reader and
// bufio.Writer of the hijacked connection; net/http hands 4 KiB of each, which an idle
// connection would hold forever. Client frames are small (at most gateway.max_frame_bytes,
// read through the reader in pieces of any size), and every write of a session goes through
// corkWriter, which gathers a batch's frames in a pooled buffer, so both stay small.
const (
	// readBufferBytes buffers reads of client frames.
	readBufferBytes = 512
	// writeBufferBytes holds one control frame (2 bytes of header, 125 of payload) whole, so
	// that the library's pongs and close frames reach the socket in one write.
	writeBufferBytes = 256
	// corkLimit is the most bytes a batch gathers before they are written through: a batch
	// or a page of catch-up larger than this goes out in pieces of about this size.
	corkLimit = 64 << 10
)

// corkPool holds the buffers of corked writes; a connection holds one only while it writes.
var corkPool = gosync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// corkWriter is what the library's bufio.Writer writes to: the socket, within
// gateway.write_timeout per write (a deadline on the connection, so a peer that stopped
// reading fails the write and is dropped), or, while the session is corked, a buffer that
// uncork writes to the socket at once. The library flushes its writer at the end of every
// message, one write per frame; corked, a batch of frames costs one write (one system call
// and, for the peer, one read) instead. Safe for concurrent use: the library writes control
// frames (pongs, close) from the reader's goroutine.
type corkWriter struct {
	conn    net.Conn
	timeout time.Duration

	mu     gosync.Mutex
	corked bool
	buf    *[]byte // from corkPool while corked and not empty
}

// Write writes p through, or gathers it while corked (writing the gathered bytes first when
// p would take them past corkLimit).
func (w *corkWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.corked {
		return w.writeThrough(p)
	}
	if w.buf != nil && len(*w.buf)+len(p) > corkLimit {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= corkLimit {
		return w.writeThrough(p)
	}
	if w.buf == nil {
		w.buf = corkPool.Get().(*[]byte) //nolint:forcetypeassert // the pool holds nothing else.
	}
	*w.buf = append(*w.buf, p...)
	return len(p), nil
}

// cork gathers the writes that follow until uncork.
func (w *corkWriter) cork() {
	w.mu.Lock()
	w.corked = true
	w.mu.Unlock()
}

// flush writes what was gathered in one write and stays corked. The writer flushes before
// each page of catch-up, so that it holds no gathered bytes while it waits for the database;
// the batches of one round go out together when it uncorks.
func (w *corkWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// uncork writes what was gathered in one write and writes through again.
func (w *corkWriter) uncork() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.corked = false
	return w.flushLocked()
}

// flushLocked writes the gathered bytes and gives the buffer back.
func (w *corkWriter) flushLocked() error {
	if w.buf == nil {
		return nil
	}
	_, err := w.writeThrough(*w.buf)
	if cap(*w.buf) <= 4*corkLimit {
		*w.buf = (*w.buf)[:0]
		corkPool.Put(w.buf)
	}
	w.buf = nil
	return err
}

// writeThrough writes p to the socket within the timeout.
func (w *corkWriter) writeThrough(p []byte) (int, error) {
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, fmt.Errorf("gateway: write deadline: %w", err)
	}
	n, err := w.conn.Write(p)
	if err != nil {
		return n, fmt.Errorf("gateway: write: %w", err)
	}
	return n, nil
}

// upgrader is the http.ResponseWriter the gateway hands websocket.Accept: its Hijack
// returns the connection with small buffers (readBufferBytes, writeBufferBytes) over the
// session's corkWriter instead of the 4 KiB ones of net/http.
type upgrader struct {
	http.ResponseWriter
	timeout time.Duration
	cork    *corkWriter // set by Hijack
}

// errNoHijacker: the ResponseWriter cannot give up its connection (no HTTP/1.1 server).
var errNoHijacker = errors.New("gateway: the response writer cannot be hijacked")

// Hijack takes over the connection from net/http, keeping the bytes the server had already
// read past the request (a client may send its first frame at once).
func (u *upgrader) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(u.ResponseWriter).Hijack()
	if err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			return nil, nil, errNoHijacker
		}
		return nil, nil, fmt.Errorf("gateway: hijack: %w", err)
	}
	r := brw.Reader
	if r.Buffered() == 0 {
		r = bufio.NewReaderSize(conn, readBufferBytes)
	}
	u.cork = &corkWriter{conn: conn, timeout: u.timeout}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(u.cork, writeBufferBytes)), nil
}

// Unwrap gives http.ResponseController the writer underneath.
func (u *upgrader) Unwrap() http.ResponseWriter {
	return u.ResponseWriter
}
