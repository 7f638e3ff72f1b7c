// Package migrate applies every module's SQL migrations, embedded in the binary, so that any
// bothy process can bring its database to the schema it was built for, and readiness can tell
// whether it is there yet.
//
// A module contributes a Set: its schema name and a file system whose root holds files named
// NNNN_snake_name.sql. Sets apply in slice order (the module register's order), files in
// version order, each file together with its bookkeeping row in one transaction, so a failing
// file leaves the earlier ones applied and itself not at all. The files create their own
// schema and must name every object schema-qualified; they must not contain BEGIN or COMMIT,
// nor statements that cannot run in a transaction (CREATE INDEX CONCURRENTLY).
//
// Bookkeeping lives in bothy_meta.schema_migrations, created by Apply itself. An applied file
// whose content changed is an error, never silently skipped: fix forward with a new file.
package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LockKey is the key of the session advisory lock (pg_advisory_lock) that Apply holds
// throughout, so that processes starting at the same time migrate one after the other. It is
// "bothymig" in ASCII; anything else taking this key would block migrations.
const LockKey int64 = 0x626f7468796d6967

// MetaSchema is the schema of the bookkeeping table; no Set may use it.
const MetaSchema = "bothy_meta"

// ErrInvalidSet is wrapped by the errors of Apply and Pending about a malformed Set (schema
// name, file name, duplicate version), found before the database is touched.
var ErrInvalidSet = errors.New("invalid migration set")

// ErrChanged is wrapped by the errors of Apply and Pending about an applied file whose name or
// content no longer matches what was recorded when it ran.
var ErrChanged = errors.New("applied migration changed")

// Set is one module's migrations.
type Set struct {
	// Schema is the module's schema name, also the key of its bookkeeping rows.
	Schema string
	// FS holds the NNNN_snake_name.sql files at its root and nothing else.
	FS fs.FS
}

var (
	fileRe   = regexp.MustCompile(`^([0-9]{4})_([a-z0-9]+(?:_[a-z0-9]+)*)\.sql$`)
	schemaRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
)

// file is one migration read from a Set.
type file struct {
	schema   string
	version  int
	name     string // the file name, e.g. 0001_create_spaces.sql
	sql      string
	checksum string // sha256 of the content, hex
}

func (f file) String() string { return f.schema + "/" + f.name }

type key struct {
	schema  string
	version int
}

type applied struct {
	name, checksum string
}

const createMeta = `CREATE SCHEMA IF NOT EXISTS bothy_meta;
CREATE TABLE IF NOT EXISTS bothy_meta.schema_migrations (
	schema_name text NOT NULL,
	version     integer NOT NULL,
	name        text NOT NULL,
	checksum    text NOT NULL,
	applied_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (schema_name, version)
)`

// Apply runs the files of sets not yet applied and returns how many it ran. It stops at the
// first failing file (returning the count before it) and refuses to run anything when an
// applied file changed (ErrChanged) or a set is malformed (ErrInvalidSet).
func Apply(ctx context.Context, pool *pgxpool.Pool, sets []Set) (int, error) {
	files, err := read(sets)
	if err != nil {
		return 0, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", LockKey); err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	defer unlock(ctx, conn)

	if _, err := conn.Exec(ctx, createMeta); err != nil {
		return 0, fmt.Errorf("migrate: create bookkeeping table: %w", err)
	}
	done, err := appliedFiles(ctx, conn)
	if err != nil {
		return 0, err
	}
	todo, err := unapplied(files, done)
	if err != nil {
		return 0, err
	}
	for i, f := range todo {
		if err := applyFile(ctx, conn.Conn(), f); err != nil {
			return i, err
		}
	}
	return len(todo), nil
}

// unlock releases the advisory lock; when that fails the connection is closed instead, which
// ends the session and with it the lock, rather than going back to the pool still holding it.
func unlock(ctx context.Context, conn *pgxpool.Conn) {
	ctx = context.WithoutCancel(ctx)
	var released bool
	if err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", LockKey).Scan(&released); err != nil || !released {
		_ = conn.Conn().Close(ctx)
	}
}

func applyFile(ctx context.Context, conn *pgx.Conn, f file) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Without arguments pgx uses the simple protocol, which runs a multi-statement file.
		if _, err := tx.Exec(ctx, f.sql); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO bothy_meta.schema_migrations (schema_name, version, name, checksum)
			VALUES ($1, $2, $3, $4)`, f.schema, f.version, f.name, f.checksum)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate: %s: %w", f, err)
	}
	return nil
}

// Pending counts the files of sets not yet applied; a missing bookkeeping table counts as one
// more, so 0 means the database is current. Changed applied files are an error (ErrChanged),
// as in Apply.
func Pending(ctx context.Context, pool *pgxpool.Pool, sets []Set) (int, error) {
	files, err := read(sets)
	if err != nil {
		return 0, err
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('bothy_meta.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("migrate: look up bookkeeping table: %w", err)
	}
	if !exists {
		return len(files) + 1, nil
	}
	done, err := appliedFiles(ctx, pool)
	if err != nil {
		return 0, err
	}
	todo, err := unapplied(files, done)
	if err != nil {
		return 0, err
	}
	return len(todo), nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func appliedFiles(ctx context.Context, q querier) (map[key]applied, error) {
	rows, err := q.Query(ctx, "SELECT schema_name, version, name, checksum FROM bothy_meta.schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: read bookkeeping: %w", err)
	}
	done := map[key]applied{}
	var k key
	var a applied
	_, err = pgx.ForEachRow(rows, []any{&k.schema, &k.version, &a.name, &a.checksum}, func() error {
		done[k] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("migrate: read bookkeeping: %w", err)
	}
	return done, nil
}

// unapplied returns the files without a bookkeeping row, failing on a recorded file that changed.
func unapplied(files []file, done map[key]applied) ([]file, error) {
	var todo []file
	for _, f := range files {
		rec, ok := done[key{f.schema, f.version}]
		switch {
		case !ok:
			todo = append(todo, f)
		case rec.name != f.name:
			return nil, fmt.Errorf("migrate: %s: %w: version %d was applied as %s", f, ErrChanged, f.version, rec.name)
		case rec.checksum != f.checksum:
			return nil, fmt.Errorf("migrate: %s: %w: checksum %s, applied with %s", f, ErrChanged, f.checksum, rec.checksum)
		}
	}
	return todo, nil
}

// read validates sets and loads their files in application order.
func read(sets []Set) ([]file, error) {
	var all []file
	seen := map[string]bool{}
	for _, s := range sets {
		switch {
		case !schemaRe.MatchString(s.Schema):
			return nil, fmt.Errorf("migrate: schema %q: %w: not a lowercase identifier", s.Schema, ErrInvalidSet)
		case s.Schema == MetaSchema:
			return nil, fmt.Errorf("migrate: schema %q: %w: reserved for bookkeeping", s.Schema, ErrInvalidSet)
		case seen[s.Schema]:
			return nil, fmt.Errorf("migrate: schema %q: %w: appears in two sets", s.Schema, ErrInvalidSet)
		case s.FS == nil:
			return nil, fmt.Errorf("migrate: schema %q: %w: no file system", s.Schema, ErrInvalidSet)
		}
		seen[s.Schema] = true
		files, err := readSet(s)
		if err != nil {
			return nil, err
		}
		all = append(all, files...)
	}
	return all, nil
}

func readSet(s Set) ([]file, error) {
	entries, err := fs.ReadDir(s.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrate: schema %s: %w", s.Schema, err)
	}
	var files []file
	byVersion := map[int]string{}
	for _, e := range entries {
		m := fileRe.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			return nil, fmt.Errorf("migrate: %s/%s: %w: want files named NNNN_snake_name.sql only", s.Schema, e.Name(), ErrInvalidSet)
		}
		v, _ := strconv.Atoi(m[1]) // four digits by the pattern
		if v == 0 {
			return nil, fmt.Errorf("migrate: %s/%s: %w: versions start at 0001", s.Schema, e.Name(), ErrInvalidSet)
		}
		if other, dup := byVersion[v]; dup {
			return nil, fmt.Errorf("migrate: %s/%s: %w: version %d also used by %s", s.Schema, e.Name(), ErrInvalidSet, v, other)
		}
		byVersion[v] = e.Name()
		b, err := fs.ReadFile(s.FS, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrate: %s/%s: %w", s.Schema, e.Name(), err)
		}
		sum := sha256.Sum256(b)
		files = append(files, file{schema: s.Schema, version: v, name: e.Name(), sql: string(b), checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].version < files[j].version })
	return files, nil
}
