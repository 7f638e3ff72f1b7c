package backup

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// database is what a restore knows of the database it replaces (queries/target_database.sql).
type database struct {
	name, owner                  string
	mayReplace                   bool
	encoding, collate, ctype     string
	localeProvider, localeString string
	hasInstance                  bool
}

// maxName is PostgreSQL's longest identifier in bytes (NAMEDATALEN - 1).
const maxName = 63

// sibling is the name of a database beside d: d's name with suffix, shortened to fit.
func (d database) sibling(suffix string) string {
	base := d.name
	for len(base)+len(suffix) > maxName {
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
	}
	return base + suffix
}

// inspect reads what a restore needs to know of the database at url, on a connection of its
// own, and refuses while other sessions use it (ErrDatabaseInUse) or when the role could not
// switch a fresh database in (ErrCannotSwitch).
func inspect(ctx context.Context, rawURL string) (database, error) {
	var d database
	err := withConn(ctx, rawURL, func(conn *pgx.Conn) error {
		var (
			n    int
			apps string
		)
		if err := conn.QueryRow(ctx, otherSessions).Scan(&n, &apps); err != nil {
			return fmt.Errorf("look for other sessions: %w", err)
		}
		if n > 0 {
			if apps != "" {
				apps = " (" + apps + ")"
			}
			return fmt.Errorf("%w: %d other sessions%s", ErrDatabaseInUse, n, apps)
		}
		err := conn.QueryRow(ctx, targetDatabase, instanceSchema).Scan(&d.name, &d.owner, &d.mayReplace,
			&d.encoding, &d.collate, &d.ctype, &d.localeProvider, &d.localeString, &d.hasInstance)
		if err != nil {
			return fmt.Errorf("read the database's properties: %w", err)
		}
		return nil
	})
	if err != nil {
		return database{}, err
	}
	if !d.mayReplace {
		return database{}, fmt.Errorf("database %s: %w", d.name, ErrCannotSwitch)
	}
	return d, nil
}

// maintenanceDatabases are where a restore connects to create, rename and drop databases (it
// may not be connected to the database it renames): PostgreSQL's default ones.
var maintenanceDatabases = []string{"postgres", "template1"}

// connectMaintenance connects to the first maintenance database other than target that lets
// the role in.
func connectMaintenance(ctx context.Context, rawURL, target string) (*pgx.Conn, error) {
	var errs []error
	for _, name := range maintenanceDatabases {
		if name == target {
			continue
		}
		pc, err := pgx.ParseConfig(withDatabase(rawURL, name))
		if err != nil {
			return nil, errors.New("database.url is not a valid PostgreSQL URL")
		}
		conn, err := pgx.ConnectConfig(ctx, pc)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("connect to %s: %w", name, err))
	}
	return nil, fmt.Errorf("no maintenance database to switch databases from: %w", errors.Join(errs...))
}

// withDatabase returns the postgres:// URL rawURL with its database replaced by name.
func withDatabase(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // pgx.ParseConfig reports it
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// withApplicationName returns rawURL whose sessions call themselves name (application_name),
// so that a restore tells its own sessions from anyone else's.
func withApplicationName(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // pgx.ParseConfig reports it
	}
	q := u.Query()
	q.Set("application_name", name)
	// libpq and pgx read "+" as itself, not as a space: spell spaces %20.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// createFresh creates the database fresh beside target, empty (from template0), with target's
// owner, encoding and locale; a leftover of an interrupted restore under that name is dropped
// first.
func createFresh(ctx context.Context, maint *pgx.Conn, own string, target database, fresh string) error {
	if err := dropDatabase(ctx, maint, own, fresh); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("CREATE DATABASE " + ident(fresh) + " WITH TEMPLATE template0 OWNER " + ident(target.owner) +
		" ENCODING " + literal(target.encoding) + " LC_COLLATE " + literal(target.collate) + " LC_CTYPE " + literal(target.ctype))
	switch target.localeProvider {
	case "i":
		b.WriteString(" LOCALE_PROVIDER icu ICU_LOCALE " + literal(target.localeString))
	case "b":
		b.WriteString(" LOCALE_PROVIDER builtin BUILTIN_LOCALE " + literal(target.localeString))
	}
	if _, err := maint.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("create the fresh database %s: %w", fresh, err)
	}
	return nil
}

// switchDatabases renames target to replaced and fresh to target in one transaction.
func switchDatabases(ctx context.Context, maint *pgx.Conn, own, target, fresh, replaced string) error {
	if err := dropDatabase(ctx, maint, own, replaced); err != nil {
		return err
	}
	return whileOwnSessions(ctx, maint, own, target, func() error {
		return pgx.BeginFunc(ctx, maint, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "ALTER DATABASE "+ident(target)+" RENAME TO "+ident(replaced)); err != nil {
				return fmt.Errorf("switch the databases: %w", err)
			}
			if _, err := tx.Exec(ctx, "ALTER DATABASE "+ident(fresh)+" RENAME TO "+ident(target)); err != nil {
				return fmt.Errorf("switch the databases: %w", err)
			}
			return nil
		})
	}, fresh)
}

// dropDatabase drops the database name if it exists.
func dropDatabase(ctx context.Context, maint *pgx.Conn, own, name string) error {
	return whileOwnSessions(ctx, maint, own, name, func() error {
		if _, err := maint.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	})
}

// whileOwnSessions runs fn, which renames or drops the databases named, and runs it again
// while it fails only because sessions of this restore (application name own) are still
// connected to one of them: closed, they end within moments. A session of anyone else makes
// it fail at once with ErrDatabaseInUse, as does a refusal with no session to wait for (a
// prepared transaction), seen twice in a row.
func whileOwnSessions(ctx context.Context, maint *pgx.Conn, own, name string, fn func() error, more ...string) error {
	idle := 0
	for {
		err := fn()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			return err
		}
		mine, others := 0, 0
		for _, db := range append([]string{name}, more...) {
			var m, o int
			if serr := maint.QueryRow(ctx, sessionsOf, db, own).Scan(&m, &o); serr != nil {
				return fmt.Errorf("%w (look for sessions: %w)", err, serr)
			}
			mine, others = mine+m, others+o
		}
		switch {
		case others > 0:
			return fmt.Errorf("%w: %d other sessions connected meanwhile: %w", ErrDatabaseInUse, others, err)
		case mine == 0:
			if idle++; idle > 1 {
				return fmt.Errorf("%w: %w", ErrDatabaseInUse, err)
			}
		default:
			idle = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(sessionPoll):
		}
	}
}

// sessionPoll is how often whileOwnSessions looks again: a closed session's server process
// exits within a few milliseconds.
const sessionPoll = 20 * time.Millisecond

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
