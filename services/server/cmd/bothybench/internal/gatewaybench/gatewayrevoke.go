package gatewaybench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// gwRevokeShare divides the revocation case's connections: one in this many has a token of
// its own, which the case revokes.
const gwRevokeShare = 10

// gwBaselineEvents is how many ordinary events the revocation case's baseline writes, one at
// a time, each waited for on every connection.
const gwBaselineEvents = 20

// gatewayRevocation is the revocation case (ADR 0020): how long after a token revoke's commit
// the gateway's close frame reaches the token's connection, with o.gwLatencyConns
// connections open, beside the commit-to-frame delivery of an ordinary event on the same
// connections, in milliseconds. Both are measured from the start of the call that commits
// (App.RevokeToken, RunInTx with the appender), an upper bound of commit-to-frame: measured
// from the call's return, the close often came first (the tail is woken by the commit's
// NOTIFY before the commit's acknowledgment reaches the caller), a negative delay.
type gatewayRevocation struct {
	Connections int `json:"connections"`
	Revoked     int `json:"revoked"`
	// Closed is how many revoked connections got the error frame token_revoked and the close
	// 4008; Missing how many did not within gwDrainTimeout.
	Closed         int     `json:"closed"`
	Missing        int     `json:"missing"`
	P50Ms          float64 `json:"p50_ms"`
	P99Ms          float64 `json:"p99_ms"`
	MaxMs          float64 `json:"max_ms"`
	BaselineEvents int     `json:"baseline_events"`
	BaselineP50Ms  float64 `json:"baseline_p50_ms"`
	BaselineP99Ms  float64 `json:"baseline_p99_ms"`
	// MaxDelay is gateway.revocation_max_delay of the measured App.
	MaxDelay string `json:"revocation_max_delay"`
}

// revokeConn is one connection of the revocation case and what its reader saw.
type revokeConn struct {
	conn      *wsConn
	tokenID   uuid.UUID // the token revoked for it; uuid.Nil for a connection that stays
	events    atomic.Int64
	arrivedMu sync.Mutex
	arrived   []time.Time // of each event frame
	closed    chan struct{}
	closeAt   time.Time // when the close frame came, set before closed is closed
	err       error     // why reading stopped, set before closed is closed
	lastErr   bool      // the last message before the close was the token_revoked error frame
}

// gatewayRevocationCase opens o.gwLatencyConns connections (hello, ready), every
// gwRevokeShare-th with a token of Sam's of its own, the rest with the world's tokens. The
// baseline appends gwBaselineEvents ordinary events one at a time, each committed through the
// App's appender and waited for on every connection: a sample per event and connection,
// from the committing call's start to the frame. Then it revokes the own tokens one at a time
// (App.RevokeToken, which commits token.revoked): a sample per revoke, from its start to the
// close frame on its connection.
func gatewayRevocationCase(ctx context.Context, w *gatewayWorld, o bench.Options) (r gatewayRevocation, err error) {
	n := o.GwLatencyConns
	r.Connections = n
	conns := make([]*revokeConn, n)
	var wg sync.WaitGroup
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.conn.close()
			}
		}
		wg.Wait()
	}()
	for i := range conns {
		c := &revokeConn{closed: make(chan struct{})}
		token := w.tokens[i%len(w.tokens)]
		if i%gwRevokeShare == 0 {
			issued, err := w.app.Ports().Tokens.Issue(ctx, w.people[0], nil)
			if err != nil {
				return r, fmt.Errorf("revocation: issue a token: %w", err)
			}
			token, c.tokenID = issued.Token.Reveal(), issued.TokenID
			r.Revoked++
		}
		if c.conn, err = dialWS(ctx, w.ws, token); err != nil {
			return r, fmt.Errorf("revocation: %w", err)
		}
		conns[i] = c
		if err := c.conn.writeText([]byte(`{"op":"hello"}`)); err != nil {
			return r, fmt.Errorf("revocation: hello: %w", err)
		}
		msg, _, err := c.conn.readMessage(nil, 32)
		if err != nil || !bytes.HasPrefix(msg, []byte(`{"op":"ready"`)) {
			return r, fmt.Errorf("revocation: want ready, got %q: %w", msg, err)
		}
		wg.Go(func() { c.read() })
	}

	// The baseline: ordinary events on the same connections.
	var base []time.Duration
	for k := range gwBaselineEvents {
		events := w.events(1)
		committed := time.Now() // the start of the committing call: see gatewayRevocation
		if err := w.app.Tx().RunInTx(ctx, func(ctx context.Context) error { return w.app.Appender().Append(ctx, events...) }); err != nil {
			return r, fmt.Errorf("revocation: append: %w", err)
		}
		deadline := time.Now().Add(gwDrainTimeout)
		for _, c := range conns {
			for c.events.Load() < int64(k+1) {
				if time.Now().After(deadline) {
					return r, errors.New("revocation: an ordinary event did not reach every connection")
				}
				if !bench.SleepCtx(ctx, 100*time.Microsecond) {
					return r, ctx.Err()
				}
			}
		}
		for _, c := range conns {
			base = append(base, c.arrivedAt(k).Sub(committed))
		}
	}
	r.BaselineEvents = gwBaselineEvents
	r.BaselineP50Ms, r.BaselineP99Ms = bench.Ms(bench.Percentile(base, 50)), bench.Ms(bench.Percentile(base, 99))

	// The revokes, one at a time.
	var delays []time.Duration
	for _, c := range conns {
		if c.tokenID == uuid.Nil {
			continue
		}
		committed := time.Now() // the start of the committing call: see gatewayRevocation
		if _, err := w.app.Ports().Tokens.Revoke(ctx, c.tokenID); err != nil {
			return r, fmt.Errorf("revocation: revoke: %w", err)
		}
		select {
		case <-c.closed:
		case <-time.After(gwDrainTimeout):
			r.Missing++
			continue
		case <-ctx.Done():
			return r, ctx.Err()
		}
		var ce *wsCloseError
		if !errors.As(c.err, &ce) || ce.Code != 4008 || ce.Reason != "token_revoked" || !c.lastErr {
			return r, fmt.Errorf("revocation: the connection ended with %w (error frame before: %v), want 4008 token_revoked", c.err, c.lastErr)
		}
		r.Closed++
		delays = append(delays, c.closeAt.Sub(committed))
	}
	if len(delays) == 0 {
		return r, errors.New("revocation: no connection was closed")
	}
	r.P50Ms, r.P99Ms, r.MaxMs = bench.Ms(bench.Percentile(delays, 50)), bench.Ms(bench.Percentile(delays, 99)), bench.Ms(bench.Percentile(delays, 100))
	return r, nil
}

// read reads c's frames until the connection ends: the arrival of every event frame, and
// whether the last message before the close was the token_revoked error frame.
func (c *revokeConn) read() {
	var buf []byte
	for {
		msg, _, err := c.conn.readMessage(buf, 64)
		if err != nil {
			c.closeAt, c.err = time.Now(), err
			close(c.closed)
			return
		}
		buf = msg
		c.lastErr = bytes.HasPrefix(msg, []byte(`{"op":"error","code":"token_revoked"`))
		if bytes.HasPrefix(msg, []byte(`{"op":"event"`)) {
			c.arrivedMu.Lock()
			c.arrived = append(c.arrived, time.Now())
			c.arrivedMu.Unlock()
			c.events.Add(1)
		}
	}
}

// arrivedAt returns when the k-th event frame arrived (k counted from 0); the caller waited
// until it did.
func (c *revokeConn) arrivedAt(k int) time.Time {
	c.arrivedMu.Lock()
	defer c.arrivedMu.Unlock()
	return c.arrived[k]
}
