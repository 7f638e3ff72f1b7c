package tx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/kernel/problem"
)

// ErrDatabaseUnavailable is the problem every database failure that Unavailable recognizes is
// wrapped in: problem.ErrUnavailable (503, with Retry-After at the edge) with a detail a client
// may read. The cause stays in the chain for the log, never in the response.
var ErrDatabaseUnavailable = problem.New(problem.ErrUnavailable,
	"The database is unavailable. Retry after the delay Retry-After gives.")

// Unavailable reports whether err says the database cannot be reached or is not serving,
// as opposed to a statement that failed (a constraint, a syntax error, a serialization
// failure) or a caller that went away. It is the one place that decides what "database
// unavailable" means (spec 05, "Database unavailable"):
//   - a connection that could not be made (*pgconn.ConnectError: dial refused, DNS, TLS,
//     authentication, a connect_timeout or a context deadline while connecting), also when the
//     pool's Acquire made it;
//   - a connection that broke (reset, refused, broken pipe, unexpected EOF, any net.Error that
//     is no timeout of the caller's context, pgconn.ErrConnClosed);
//   - the server's refusals of SQLSTATE class 08 (connection exception), 57P01
//     (admin_shutdown), 57P02 (crash_shutdown), 57P03 (cannot_connect_now) and 53300
//     (too_many_connections).
//
// A context.Canceled anywhere in the chain is never unavailable: the client went away and
// the edge logs it as such. A statement timeout (57014) or a deadline of the caller's context
// on a running statement is not unavailable either: the database answered, too slowly.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		if strings.HasPrefix(pgErr.Code, "08") {
			return true
		}
		// Any other server error inside a connect attempt (28P01, a bad password; 3D000, no
		// such database) still means no connection: the ConnectError case below.
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) && !netErr.Timeout()
}

// Classify returns err wrapped in ErrDatabaseUnavailable when Unavailable(err), else err as
// it is (nil stays nil; an error already unavailable is not wrapped twice). The transaction
// runner and the DB it hands out classify every error they return, so every module's
// adapter reports an outage as problem.ErrUnavailable without code of its own.
func Classify(err error) error {
	if err == nil || errors.Is(err, problem.ErrUnavailable) || !Unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDatabaseUnavailable, err)
}
