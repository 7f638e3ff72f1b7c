// Package pglisten implements the log tail's Listener port (sync/app) with PostgreSQL
// LISTEN/NOTIFY on a dedicated connection: the appender sends NOTIFY bothy_event_log with the
// new head seq in the commit phase, PostgreSQL delivers it when the transaction commits, and
// the tail reads the log right away instead of at its next poll.
//
// It is a separate package from sync/adapters/postgres because its connection lives outside
// the pool and outside every transaction: a LISTEN session must stay open, and a pooled
// connection would hand its notifications to whoever borrowed it next.
package pglisten

import (
	"context"
	_ "embed" // the LISTEN statement
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Channel is the notification channel the appender notifies and Listen listens on.
const Channel = "bothy_event_log"

// DefaultCheckInterval is how long Listen waits for a notification before it checks with a
// round trip that the connection still answers, so a peer that vanished without closing the
// connection (a network partition, a killed host) is noticed within about this time rather
// than after TCP keepalive gives up.
const DefaultCheckInterval = 30 * time.Second

// closeTimeout bounds closing the connection when Listen returns.
const closeTimeout = 5 * time.Second

//go:embed queries/listen_event_log.sql
var listenEventLog string

// Connect opens the dedicated connection Listen uses; wire builds it from the pool's
// configuration, so it reaches the same database with the same settings.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// Listener is the tail's Listener port on PostgreSQL.
type Listener struct {
	connect Connect
	check   time.Duration
}

// New returns a Listener that connects with connect and checks an idle connection every
// check (zero means DefaultCheckInterval).
func New(connect Connect, check time.Duration) *Listener {
	if check <= 0 {
		check = DefaultCheckInterval
	}
	return &Listener{connect: connect, check: check}
}

// Listen opens a connection, runs LISTEN bothy_event_log, calls ready and then notify for
// every notification with the head seq of its payload (-1 when the payload is not a
// non-negative number). It returns ctx.Err() when ctx ends, and a wrapped error when the
// connection cannot be opened or is lost (PostgreSQL restarted, the network broke); the
// connection is closed either way.
func (l *Listener) Listen(ctx context.Context, ready func(), notify func(head int64)) error {
	conn, err := l.connect(ctx)
	if err != nil {
		return fmt.Errorf("listen: connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, listenEventLog); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	ready()
	for {
		n, err := l.wait(ctx, conn)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case n == nil || n.Channel != Channel:
			continue
		}
		head, err := strconv.ParseInt(n.Payload, 10, 64)
		if err != nil || head < 0 {
			head = -1
		}
		notify(head)
	}
}

// wait returns the next notification, or nil after a quiet check interval in which the
// connection answered a round trip.
func (l *Listener) wait(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, l.check)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	if err == nil {
		return n, nil
	}
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("listen: wait for notification: %w", err)
	}
	// Quiet: the timeout left the connection usable; prove the server is still there.
	if err := conn.Ping(ctx); err != nil {
		return nil, fmt.Errorf("listen: connection check: %w", err)
	}
	return nil, nil
}
