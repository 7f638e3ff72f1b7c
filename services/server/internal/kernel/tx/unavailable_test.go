package tx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// timeoutErr is a net.Error that timed out (a read deadline), which is no outage by itself.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestUnavailableClassifiesErrorKinds(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "server says"} }
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial refused", fmt.Errorf("acquire: %w", opErr(syscall.ECONNREFUSED)), true},
		{"connection reset", fmt.Errorf("read: %w", opErr(syscall.ECONNRESET)), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"connect error from the pool's acquire", fmt.Errorf("tx: begin: %w", &pgconn.ConnectError{}), true},
		{"unexpected EOF mid-message", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"EOF of a closed socket", fmt.Errorf("receive message: %w", io.EOF), true},
		{"conn closed", fmt.Errorf("query: %w", pgconn.ErrConnClosed), true},
		{"57P01 admin_shutdown", pg("57P01"), true},
		{"57P02 crash_shutdown", pg("57P02"), true},
		{"57P03 cannot_connect_now", pg("57P03"), true},
		{"53300 too_many_connections", pg("53300"), true},
		{"08006 connection_failure", fmt.Errorf("wrapped: %w", pg("08006")), true},
		{"08001 sqlclient_unable_to_establish_sqlconnection", pg("08001"), true},
		{"08P01 protocol_violation", pg("08P01"), true},
		{"other net error", &net.DNSError{Err: "no such host", Name: "db.example.com"}, true},
		{"23505 unique_violation", pg("23505"), false},
		{"40001 serialization_failure", pg("40001"), false},
		{"57014 statement timeout", pg("57014"), false},
		{"no rows", pgx.ErrNoRows, false},
		{"a plain error", errors.New("boom"), false},
		{"deadline of a running statement", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
		{"read deadline", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, false},
		{"client went away while dialling", fmt.Errorf("%w: %w", opErr(syscall.ECONNREFUSED), context.Canceled), false},
		{"client went away", context.Canceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tx.Unavailable(tc.err); got != tc.want {
				t.Fatalf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
			got := tx.Classify(tc.err)
			switch {
			case tc.err == nil:
				if got != nil {
					t.Fatalf("Classify(nil) = %v", got)
				}
			case tc.want:
				if !errors.Is(got, problem.ErrUnavailable) || !errors.Is(got, tc.err) {
					t.Fatalf("Classify(%v) = %v, want it to be problem.ErrUnavailable and keep its cause", tc.err, got)
				}
				p := problem.From(context.Background(), got)
				if p.Status != 503 || p.Code != "unavailable" {
					t.Fatalf("problem of %v = %d %s, want 503 unavailable", tc.err, p.Status, p.Code)
				}
				if again := tx.Classify(got); again != got { //nolint:errorlint // the very error: not wrapped twice
					t.Fatalf("Classify wrapped an unavailable error twice: %v", again)
				}
			default:
				if got != tc.err { //nolint:errorlint // the very error, untouched
					t.Fatalf("Classify(%v) = %v, want it untouched", tc.err, got)
				}
			}
		})
	}
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return addr
}

// TestRunnerClassifiesAnUnreachableDatabase: a pool whose server does not listen fails every
// read through DB and every RunInTx with problem.ErrUnavailable.
func TestRunnerClassifiesAnUnreachableDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, "postgres://sam@"+closedPort(t)+"/bothy?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	r := tx.NewRunner(pool)

	var n int
	err = r.DB(ctx).QueryRow(ctx, "SELECT 1").Scan(&n)
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("QueryRow.Scan = %v, want problem.ErrUnavailable", err)
	}
	_, err = r.DB(ctx).Query(ctx, "SELECT 1")
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("Query = %v, want problem.ErrUnavailable", err)
	}
	_, err = r.DB(ctx).Exec(ctx, "SELECT 1")
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("Exec = %v, want problem.ErrUnavailable", err)
	}
	err = r.DB(ctx).SendBatch(ctx, &pgx.Batch{QueuedQueries: []*pgx.QueuedQuery{{SQL: "SELECT 1"}}}).Close()
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("SendBatch.Close = %v, want problem.ErrUnavailable", err)
	}
	ran := false
	err = r.RunInTx(ctx, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, problem.ErrUnavailable) || ran {
		t.Fatalf("RunInTx = %v (fn ran: %v), want problem.ErrUnavailable before fn", err, ran)
	}
}

// TestRunnerClassifiesATerminatedConnection: a transaction whose backend is terminated (what a
// server shutdown does to every connection: 57P01) fails with problem.ErrUnavailable, while
// a statement that fails on a healthy connection keeps its own error.
func TestRunnerClassifiesATerminatedConnection(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := pgtest.New(t)
	r := tx.NewRunner(pool)

	err := r.RunInTx(ctx, func(ctx context.Context) error {
		var pid int
		if err := r.DB(ctx).QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		// Another connection of the pool ends this one's backend.
		if _, err := pool.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			return fmt.Errorf("terminate: %w", err)
		}
		var one int
		return r.DB(ctx).QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("RunInTx over a terminated backend = %v, want problem.ErrUnavailable", err)
	}

	_, err = r.DB(ctx).Exec(ctx, "SELECT * FROM no_such_table")
	if err == nil || errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("a failing statement = %v, want its own error, not unavailable", err)
	}
	rows, err := r.DB(ctx).Query(ctx, "SELECT 1/0")
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if err == nil || errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("a division by zero = %v, want its own error, not unavailable", err)
	}
}
