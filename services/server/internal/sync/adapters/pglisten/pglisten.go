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

	"bothy.example.com/server/internal/kernel/config"
)

// Channel is the notification channel the appender notifies and Listen listens on.
const Channel = "bothy_event_log"

// Configuration keys of the listener; wire reads them with ConfigFrom.
var (
	// KeyCheckInterval is how long Listen waits for a notification before it checks with a
	// round trip that the connection still answers, so a peer that vanished without closing
	// the connection (a network partition, a killed host) is noticed within about this time
	// rather than after TCP keepalive gives up.
	KeyCheckInterval = config.Define("sync.listen_check_interval", config.KindDuration, "30s",
		"how long the log tail's LISTEN connection may stay without a notification before a round trip checks that the database still answers; a lost connection is noticed within about this time (more than 0)")
	// KeyCloseTimeout bounds closing the connection when Listen returns, so a stopping
	// process does not hang on a database that does not answer.
	KeyCloseTimeout = config.Define("sync.listen_close_timeout", config.KindDuration, "5s",
		"longest closing the log tail's LISTEN connection may take when the tail stops or reconnects (more than 0)")
)

// Config is what the listener reads from the configuration.
type Config struct {
	// CheckInterval is sync.listen_check_interval.
	CheckInterval time.Duration
	// CloseTimeout is sync.listen_close_timeout.
	CloseTimeout time.Duration
}

// ConfigFrom reads the listener's keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key.
func ConfigFrom(cfg *config.Config) Config {
	return Config{CheckInterval: cfg.Duration(KeyCheckInterval), CloseTimeout: cfg.Duration(KeyCloseTimeout)}
}

// Validate refuses durations that are not positive: a check interval of 0 would spin, a close
// timeout of 0 would never close cleanly.
func (c Config) Validate() error {
	switch {
	case c.CheckInterval <= 0:
		return fmt.Errorf("pglisten: %s is %v, want more than 0", KeyCheckInterval.Name, c.CheckInterval)
	case c.CloseTimeout <= 0:
		return fmt.Errorf("pglisten: %s is %v, want more than 0", KeyCloseTimeout.Name, c.CloseTimeout)
	}
	return nil
}

//go:embed queries/listen_event_log.sql
var listenEventLog string

// Connect opens the dedicated connection Listen uses; wire builds it from the pool's
// configuration, so it reaches the same database with the same settings.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// Listener is the tail's Listener port on PostgreSQL.
type Listener struct {
	connect      Connect
	check        time.Duration
	closeTimeout time.Duration
}

// New returns a Listener that connects with connect, checks an idle connection every
// cfg.CheckInterval and closes it within cfg.CloseTimeout; cfg must be valid (Validate).
func New(connect Connect, cfg Config) (*Listener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Listener{connect: connect, check: cfg.CheckInterval, closeTimeout: cfg.CloseTimeout}, nil
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
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.closeTimeout)
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
