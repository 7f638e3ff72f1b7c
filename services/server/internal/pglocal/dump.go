package pglocal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// ErrToolsNotInstalled is returned by FindTools when pg_dump and pg_restore cannot be found; its
// text tells the operator how to install them.
var ErrToolsNotInstalled = errors.New("postgresql client programs (pg_dump, pg_restore) not found on PATH or in " +
	libGlob + ": apt-get install postgresql")

// Tools are PostgreSQL's own backup programs, pg_dump and pg_restore, from one directory so that
// their versions agree. They connect over TCP like any client, so they run as the calling user
// (root included): they never touch a data directory.
type Tools struct {
	pgDump, pgRestore string
}

// FindTools looks for pg_dump and pg_restore the way Start looks for the server binaries: first
// the entries of PATH in order, then /usr/lib/postgresql/<version>/bin, highest version first.
func FindTools() (Tools, error) {
	return findTools(os.Getenv("PATH"), libGlob)
}

func findTools(pathEnv, glob string) (Tools, error) {
	dirs := filepath.SplitList(pathEnv)
	versioned, _ := filepath.Glob(glob) // the pattern is constant or test-made; ErrBadPattern cannot happen
	sort.SliceStable(versioned, func(i, j int) bool {
		return versionOf(versioned[i]) > versionOf(versioned[j])
	})
	for _, d := range append(dirs, versioned...) {
		if d == "" {
			continue
		}
		t := Tools{pgDump: filepath.Join(d, "pg_dump"), pgRestore: filepath.Join(d, "pg_restore")}
		if executable(t.pgDump) && executable(t.pgRestore) {
			return t, nil
		}
	}
	return Tools{}, ErrToolsNotInstalled
}

// Progress is how far a pg_dump or pg_restore run has come: Done of Total steps, Item the step
// it reported last (a table, an index). Total is 0 while it is unknown.
type Progress struct {
	// Step is "dump" or "restore".
	Step string
	// Done counts the steps reported so far; it never exceeds Total when Total is known.
	Done int
	// Total is the number of steps the run will report: for a dump the tables whose data it
	// writes, for a restore the entries of the archive's table of contents.
	Total int
	// Item names what the last step was about, as the program's --verbose line says it.
	Item string
}

// DumpOptions describe one pg_dump run.
type DumpOptions struct {
	// URL is the database to dump (a postgres:// URL; its password reaches pg_dump through
	// PGPASSWORD, never its command line).
	URL string
	// File receives the archive (pg_dump --format=custom).
	File string
	// Schemas limits the dump to these schemas (pg_dump --schema each); empty dumps them all.
	Schemas []string
	// Tables is the number of tables whose data the dump writes, the Total of its progress;
	// 0 when unknown.
	Tables int
	// Progress, when set, is told after every line pg_dump --verbose writes.
	Progress func(Progress)
}

// Dump runs pg_dump --format=custom into o.File. On failure the error carries the end of
// pg_dump's output.
func (t Tools) Dump(ctx context.Context, o DumpOptions) error {
	conn, env, err := clientConnection(o.URL)
	if err != nil {
		return err
	}
	args := []string{"--format=custom", "--verbose", "--no-owner", "--no-privileges", "--file=" + o.File}
	for _, s := range o.Schemas {
		args = append(args, "--schema="+s)
	}
	args = append(args, "--dbname="+conn)
	counter := NewProgressCounter("dump", o.Tables, o.Progress)
	return runVerbose(ctx, t.pgDump, args, env, counter)
}

// RestoreOptions describe one pg_restore run.
type RestoreOptions struct {
	// URL is the database to restore into (a postgres:// URL; its password reaches pg_restore
	// through PGPASSWORD).
	URL string
	// File is the archive pg_dump --format=custom wrote.
	File string
	// Entries is the number of entries of the archive's table of contents (Archive.Entries),
	// the Total of the progress; 0 when unknown.
	Entries int
	// Progress, when set, is told after every line pg_restore --verbose writes.
	Progress func(Progress)
}

// Restore runs pg_restore into the database of o.URL in a single transaction (a failed restore
// changes nothing), stopping at the first error, without the archive's owners and privileges
// (the objects belong to the connecting role). The database must not hold the archive's
// schemas yet: pg_restore creates them (bothy restores into a fresh database, ADR 0035).
func (t Tools) Restore(ctx context.Context, o RestoreOptions) error {
	conn, env, err := clientConnection(o.URL)
	if err != nil {
		return err
	}
	args := []string{"--verbose", "--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges",
		"--dbname=" + conn, o.File}
	counter := NewProgressCounter("restore", o.Entries, o.Progress)
	return runVerbose(ctx, t.pgRestore, args, env, counter)
}

// TableRows reads the rows of one table from the archive file (pg_restore --data-only of that
// table alone, read as the COPY text it writes): each row maps a column's name to its value in
// COPY's text form, a NULL to `\N`. A table the archive holds no data of gives no row.
func (t Tools) TableRows(ctx context.Context, file, schema, table string) ([]map[string]string, error) {
	//nolint:gosec // G204: pg_restore found by FindTools; the names and the file are arguments, not shell words.
	cmd := exec.CommandContext(ctx, t.pgRestore, "--data-only", "--schema="+schema, "--table="+table, "--file=-", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pg_restore --data-only --table=%s.%s %s: %w: %s", schema, table, file, err, tail([]byte(stderr.String())))
	}
	return ParseCopy(string(out)), nil
}

// ParseCopy reads the rows of the first COPY ... FROM stdin block of a SQL script as
// pg_restore writes it: the column names from its header, then one tab-separated line per row
// up to the line `\.`.
func ParseCopy(script string) []map[string]string {
	var (
		columns []string
		rows    []map[string]string
	)
	for line := range strings.SplitSeq(script, "\n") {
		if columns == nil {
			if m := copyHeaderRe.FindStringSubmatch(line); m != nil {
				for c := range strings.SplitSeq(m[1], ",") {
					columns = append(columns, strings.Trim(strings.TrimSpace(c), `"`))
				}
			}
			continue
		}
		if line == `\.` {
			break
		}
		values := strings.Split(line, "\t")
		row := make(map[string]string, len(columns))
		for i, c := range columns {
			if i < len(values) {
				row[c] = values[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

var copyHeaderRe = regexp.MustCompile(`^COPY \S+ \(([^)]*)\) FROM stdin;$`)

// Archive is what pg_restore --list tells of an archive.
type Archive struct {
	// Entries is the number of entries of its table of contents.
	Entries int
	// Schemas are the schemas it creates, in the order it lists them.
	Schemas []string
	// CreatedAt is when pg_dump wrote it ("Archive created at"); zero when the header lacks it.
	CreatedAt time.Time
	// Database is the name of the database it was dumped from.
	Database string
}

var (
	archiveCreatedRe = regexp.MustCompile(`(?m)^;\s+Archive created at (.+)$`)
	archiveDBRe      = regexp.MustCompile(`(?m)^;\s+dbname: (.*)$`)
	tocSchemaRe      = regexp.MustCompile(`^\d+;\s*\d+\s+\d+\s+SCHEMA\s+-\s+(\S+)`)
)

// List reads the table of contents of the archive file (pg_restore --list).
func (t Tools) List(ctx context.Context, file string) (Archive, error) {
	//nolint:gosec // G204: pg_restore found by FindTools; the file is an argument, not a shell word.
	cmd := exec.CommandContext(ctx, t.pgRestore, "--list", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Archive{}, fmt.Errorf("pg_restore --list %s: %w: %s", file, err, tail([]byte(stderr.String())))
	}
	return ParseList(string(out)), nil
}

// ParseList reads the output of pg_restore --list: every line that is not a comment is one entry
// of the table of contents.
func ParseList(out string) Archive {
	var a Archive
	if m := archiveCreatedRe.FindStringSubmatch(out); m != nil {
		a.CreatedAt = parseArchiveTime(strings.TrimSpace(m[1]))
	}
	if m := archiveDBRe.FindStringSubmatch(out); m != nil {
		a.Database = strings.TrimSpace(m[1])
	}
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		a.Entries++
		if m := tocSchemaRe.FindStringSubmatch(line); m != nil {
			a.Schemas = append(a.Schemas, m[1])
		}
	}
	return a
}

// parseArchiveTime reads pg_dump's "2026-12-01 20:40:05 UTC" (the zone as the server's
// TimeZone names it); a zone Go cannot place is read as UTC, and an unreadable time is zero.
func parseArchiveTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -07", "2006-01-02 15:04:05"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts.UTC()
		}
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		if ts, err := time.Parse("2006-01-02 15:04:05", s[:i]); err == nil {
			return ts.UTC()
		}
	}
	return time.Time{}
}

// ProgressCounter turns the --verbose lines of pg_dump or pg_restore into Progress: a dump
// counts the tables whose data it writes ("dumping contents of table"), a restore every entry it
// creates, fills or runs ("creating", "processing data for table", "executing"); the others
// (connecting, reading the catalog) change nothing. Done never passes a known Total, and Finish
// reports Total as done (a restore without owners and privileges skips some entries).
type ProgressCounter struct {
	step  string
	total int
	done  int
	tell  func(Progress)
}

// NewProgressCounter returns a counter for step ("dump" or "restore") out of total steps (0:
// unknown) that tells fn (nil: nobody).
func NewProgressCounter(step string, total int, fn func(Progress)) *ProgressCounter {
	return &ProgressCounter{step: step, total: total, tell: fn}
}

var (
	dumpStepRe    = regexp.MustCompile(`^pg_dump: dumping contents of table "?([^"]+)"?`)
	restoreStepRe = regexp.MustCompile(`^pg_restore: (?:creating [A-Z][A-Z ]*|processing data for table|executing [A-Z][A-Z ]*) "?([^"]*)"?`)
)

// Line counts one line of the program's standard error; it reports whether the line was a step.
func (c *ProgressCounter) Line(line string) bool {
	re := dumpStepRe
	if c.step == "restore" {
		re = restoreStepRe
	}
	m := re.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return false
	}
	c.done++
	if c.total > 0 && c.done > c.total {
		c.done = c.total
	}
	c.report(m[1])
	return true
}

// Finish reports the run complete: Done equals Total (Done itself when Total was unknown).
func (c *ProgressCounter) Finish() {
	if c.total > 0 {
		c.done = c.total
	} else {
		c.total = c.done
	}
	c.report("")
}

// Progress is the counter's state.
func (c *ProgressCounter) Progress() Progress {
	return Progress{Step: c.step, Done: c.done, Total: c.total}
}

func (c *ProgressCounter) report(item string) {
	if c.tell == nil {
		return
	}
	p := c.Progress()
	p.Item = item
	c.tell(p)
}

// runVerbose runs a client program, feeding every line of its standard error to counter, and
// keeps the end of that output for the error of a failed run.
func runVerbose(ctx context.Context, name string, args, env []string, counter *ProgressCounter) error {
	//nolint:gosec // G204: name is pg_dump or pg_restore found by FindTools; args are not shell words.
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	var last []string
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !counter.Line(line) {
			last = append(last, line)
			if len(last) > 20 {
				last = last[1:]
			}
		}
	}
	_, _ = io.Copy(io.Discard, stderr)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(name), err, tail([]byte(strings.Join(last, "\n"))))
	}
	counter.Finish()
	return nil
}

// clientConnection turns a postgres:// URL into the connection string and environment of a
// libpq program: the password moves to PGPASSWORD (a command line is visible to every user of
// the machine), and pgx's own parameters (pool_*) are dropped, since libpq refuses them. The
// environment is the process's, without PG* variables that could redirect the program.
func clientConnection(raw string) (conn string, env []string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// The URL may hold a password: do not repeat it.
		return "", nil, errors.New("pglocal: backup and restore need the database as a postgres:// URL")
	}
	env = serverEnv(os.Environ())
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			env = append(env, "PGPASSWORD="+pw)
			u.User = url.User(u.User.Username())
		}
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), env, nil
}
