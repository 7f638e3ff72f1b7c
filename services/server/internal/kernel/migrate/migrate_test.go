package migrate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) {
	// No sets: every test starts from a database with nothing but the bookkeeping table.
	code := pgtest.Main(m)
	os.Exit(leaktest.Check(code))
}

// bare returns a pool on a test database without the bookkeeping table, as a database looks
// before bothy first migrated it (pgtest's template always has the table).
func bare(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.New(t)
	if _, err := pool.Exec(t.Context(), "DROP SCHEMA bothy_meta CASCADE"); err != nil {
		t.Fatalf("drop bookkeeping: %v", err)
	}
	return pool
}

func sqlFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func checksum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// orderSets are two sets whose order is neither alphabetical nor the order of their versions,
// each file appending its own label to zulu.trail.
func orderSets() []migrate.Set {
	return []migrate.Set{
		{Schema: "zulu", FS: sqlFS(map[string]string{
			"0010_tenth.sql":  "INSERT INTO zulu.trail (label) VALUES ('zulu/0010');",
			"0001_create.sql": "CREATE SCHEMA zulu; CREATE TABLE zulu.trail (seq bigserial PRIMARY KEY, label text NOT NULL); INSERT INTO zulu.trail (label) VALUES ('zulu/0001');",
			"0002_second.sql": "INSERT INTO zulu.trail (label) VALUES ('zulu/0002');",
		})},
		{Schema: "alpha", FS: sqlFS(map[string]string{
			"0003_third.sql": "INSERT INTO zulu.trail (label) VALUES ('alpha/0003');",
			"0001_first.sql": "CREATE SCHEMA alpha; INSERT INTO zulu.trail (label) VALUES ('alpha/0001');",
		})},
	}
}

func trail(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), "SELECT label FROM zulu.trail ORDER BY seq")
	if err != nil {
		t.Fatalf("query trail: %v", err)
	}
	var labels []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatalf("scan: %v", err)
		}
		labels = append(labels, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return labels
}

type record struct {
	schema   string
	version  int
	name     string
	checksum string
}

func records(t *testing.T, pool *pgxpool.Pool) []record {
	t.Helper()
	rows, err := pool.Query(t.Context(),
		"SELECT schema_name, version, name, checksum, applied_at FROM bothy_meta.schema_migrations ORDER BY schema_name, version")
	if err != nil {
		t.Fatalf("query records: %v", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		var at time.Time
		if err := rows.Scan(&r.schema, &r.version, &r.name, &r.checksum, &at); err != nil {
			t.Fatalf("scan: %v", err)
		}
		if at.IsZero() || at.After(time.Now().Add(time.Minute)) {
			t.Errorf("applied_at of %s/%d = %v", r.schema, r.version, at)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return out
}

func apply(t *testing.T, pool *pgxpool.Pool, sets []migrate.Set) int {
	t.Helper()
	n, err := migrate.Apply(t.Context(), pool, sets)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return n
}

func pending(t *testing.T, pool *pgxpool.Pool, sets []migrate.Set) int {
	t.Helper()
	n, err := migrate.Pending(t.Context(), pool, sets)
	if err != nil {
		t.Fatalf("pending: %v", err)
	}
	return n
}

func TestApplyOrderAndRecords(t *testing.T) {
	t.Parallel()
	pool := bare(t)
	sets := orderSets()

	if n := apply(t, pool, sets); n != 5 {
		t.Errorf("applied = %d, want 5", n)
	}
	want := []string{"zulu/0001", "zulu/0002", "zulu/0010", "alpha/0001", "alpha/0003"}
	if got := trail(t, pool); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order = %v, want %v", got, want)
	}

	var wantRecords []record
	for _, s := range []migrate.Set{sets[1], sets[0]} { // records sort by schema name
		fsys := s.FS.(fstest.MapFS)
		for _, name := range sortedKeys(fsys) {
			var v int
			if _, err := fmt.Sscanf(name, "%04d_", &v); err != nil {
				t.Fatalf("version of %s: %v", name, err)
			}
			wantRecords = append(wantRecords, record{schema: s.Schema, version: v, name: name, checksum: checksum(string(fsys[name].Data))})
		}
	}
	got := records(t, pool)
	if fmt.Sprint(got) != fmt.Sprint(wantRecords) {
		t.Errorf("records =\n%v\nwant\n%v", got, wantRecords)
	}
}

// sortedKeys lists the file names in version order (four-digit versions sort as strings).
func sortedKeys(fsys fstest.MapFS) []string {
	return slices.Sorted(maps.Keys(fsys))
}

func TestApplyIsIdempotent(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	sets := orderSets()
	if n := apply(t, pool, sets); n != 5 {
		t.Fatalf("first apply = %d, want 5", n)
	}
	before := records(t, pool)
	if n := apply(t, pool, sets); n != 0 {
		t.Errorf("second apply = %d, want 0", n)
	}
	if after := records(t, pool); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("records changed: %v -> %v", before, after)
	}
	if got := trail(t, pool); len(got) != 5 {
		t.Errorf("trail = %v, want each file run once", got)
	}
}

func TestApplyWithoutSetsCreatesBookkeeping(t *testing.T) {
	t.Parallel()
	pool := bare(t)
	if n := pending(t, pool, nil); n != 1 {
		t.Errorf("pending on a fresh database = %d, want 1 (the bookkeeping table)", n)
	}
	if n := apply(t, pool, nil); n != 0 {
		t.Errorf("applied = %d, want 0", n)
	}
	if n := pending(t, pool, nil); n != 0 {
		t.Errorf("pending after apply = %d, want 0", n)
	}
}

func TestApplyRejectsChangedMigration(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	sets := orderSets()
	apply(t, pool, sets)

	changed := orderSets()
	changed[0].FS.(fstest.MapFS)["0002_second.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO zulu.trail (label) VALUES ('edited');")}
	for name, run := range map[string]func() error{
		"apply": func() error {
			n, err := migrate.Apply(t.Context(), pool, changed)
			if n != 0 {
				t.Errorf("applied = %d despite the changed file", n)
			}
			return err
		},
		"pending": func() error { _, err := migrate.Pending(t.Context(), pool, changed); return err },
	} {
		err := run()
		if !errors.Is(err, migrate.ErrChanged) || !strings.Contains(err.Error(), "zulu/0002_second.sql") {
			t.Errorf("%s: err = %v, want ErrChanged naming zulu/0002_second.sql", name, err)
		}
	}
	if got := trail(t, pool); len(got) != 5 {
		t.Errorf("trail = %v, want the changed file not run", got)
	}
}

func TestApplyStopsAtFailingFile(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	files := map[string]string{
		"0001_create.sql": "CREATE SCHEMA broken; CREATE TABLE broken.one (id int);",
		"0002_fails.sql":  "CREATE TABLE broken.two (id int); SELECT 1/0;",
		"0003_later.sql":  "CREATE TABLE broken.three (id int);",
	}
	sets := []migrate.Set{{Schema: "broken", FS: sqlFS(files)}}

	n, err := migrate.Apply(t.Context(), pool, sets)
	if n != 1 {
		t.Errorf("applied = %d, want 1", n)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" || !strings.Contains(err.Error(), "broken/0002_fails.sql") {
		t.Fatalf("err = %v, want division_by_zero naming broken/0002_fails.sql", err)
	}
	for table, want := range map[string]bool{"broken.one": true, "broken.two": false, "broken.three": false} {
		var exists bool
		if err := pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil {
			t.Fatalf("to_regclass: %v", err)
		}
		if exists != want {
			t.Errorf("table %s exists = %v, want %v", table, exists, want)
		}
	}
	if got := records(t, pool); len(got) != 1 || got[0].version != 1 {
		t.Errorf("records = %v, want only version 1", got)
	}
	if p := pending(t, pool, sets); p != 2 {
		t.Errorf("pending = %d, want 2", p)
	}

	files["0002_fails.sql"] = "CREATE TABLE broken.two (id int);"
	fixed := []migrate.Set{{Schema: "broken", FS: sqlFS(files)}}
	if n := apply(t, pool, fixed); n != 2 {
		t.Errorf("applied after fix = %d, want 2", n)
	}
}

func TestApplyConcurrentMigratorsSerialize(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	files := map[string]string{
		// Without the lock, two migrators would both run CREATE SCHEMA and one would fail.
		"0001_create.sql": "CREATE SCHEMA conc; CREATE TABLE conc.hits (file text NOT NULL);",
	}
	for v := 2; v <= 6; v++ {
		files[fmt.Sprintf("%04d_hit.sql", v)] = fmt.Sprintf("INSERT INTO conc.hits VALUES ('%04d');", v)
	}
	sets := []migrate.Set{{Schema: "conc", FS: sqlFS(files)}}

	const migrators = 4
	var wg sync.WaitGroup
	results := make([]int, migrators)
	errs := make([]error, migrators)
	for i := range migrators {
		wg.Go(func() { results[i], errs[i] = migrate.Apply(t.Context(), pool, sets) })
	}
	wg.Wait()
	total := 0
	for i := range migrators {
		if errs[i] != nil {
			t.Errorf("migrator %d: %v", i, errs[i])
		}
		total += results[i]
	}
	if total != len(files) {
		t.Errorf("files applied in total = %d, want %d", total, len(files))
	}
	var hits, distinct int
	if err := pool.QueryRow(t.Context(), "SELECT count(*), count(DISTINCT file) FROM conc.hits").Scan(&hits, &distinct); err != nil {
		t.Fatalf("count: %v", err)
	}
	if hits != 5 || distinct != 5 {
		t.Errorf("hits = %d (%d distinct), want 5", hits, distinct)
	}
	var locks int
	err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_catalog.pg_locks
		WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())`).Scan(&locks)
	if err != nil {
		t.Fatalf("locks: %v", err)
	}
	if locks != 0 {
		t.Errorf("advisory locks held after apply = %d, want 0", locks)
	}
}

func TestPendingBeforeAndAfter(t *testing.T) {
	t.Parallel()
	pool := bare(t)
	sets := orderSets()
	if p := pending(t, pool, sets); p != 6 {
		t.Errorf("pending before = %d, want 5 files plus the bookkeeping table", p)
	}
	apply(t, pool, sets)
	if p := pending(t, pool, sets); p != 0 {
		t.Errorf("pending after = %d, want 0", p)
	}
	sets[1].FS.(fstest.MapFS)["0004_fourth.sql"] = &fstest.MapFile{Data: []byte("SELECT 1;")}
	if p := pending(t, pool, sets); p != 1 {
		t.Errorf("pending with a new file = %d, want 1", p)
	}
}

func TestInvalidSets(t *testing.T) {
	t.Parallel()
	good := "0001_ok.sql"
	tests := []struct {
		name string
		sets []migrate.Set
		want string
	}{
		{name: "too few digits", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{good: "", "001_short.sql": ""})}}, want: "001_short.sql"},
		{name: "dash", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0002-dash.sql": ""})}}, want: "0002-dash.sql"},
		{name: "upper case", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0002_Upper.sql": ""})}}, want: "0002_Upper.sql"},
		{name: "no name", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0002_.sql": ""})}}, want: "0002_.sql"},
		{name: "not sql", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0002_notes.txt": ""})}}, want: "0002_notes.txt"},
		{name: "readme", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"README.md": ""})}}, want: "README.md"},
		{name: "version zero", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0000_zero.sql": ""})}}, want: "0000_zero.sql"},
		{name: "directory", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{"0002_dir/x.sql": ""})}}, want: "0002_dir"},
		{name: "duplicate version", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{good: "", "0001_again.sql": ""})}}, want: "0001_again.sql"},
		{name: "bad schema", sets: []migrate.Set{{Schema: "Chat", FS: sqlFS(map[string]string{good: ""})}}, want: "Chat"},
		{name: "reserved schema", sets: []migrate.Set{{Schema: "bothy_meta", FS: sqlFS(map[string]string{good: ""})}}, want: "bothy_meta"},
		{name: "duplicate schema", sets: []migrate.Set{{Schema: "s", FS: sqlFS(map[string]string{good: ""})}, {Schema: "s", FS: sqlFS(map[string]string{good: ""})}}, want: "s"},
		{name: "nil fs", sets: []migrate.Set{{Schema: "s"}}, want: "s"},
	}
	pool := bare(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, err := migrate.Apply(t.Context(), pool, tc.sets)
			if n != 0 || !errors.Is(err, migrate.ErrInvalidSet) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("apply = %d, %v; want ErrInvalidSet naming %q", n, err, tc.want)
			}
			if _, err := migrate.Pending(t.Context(), pool, tc.sets); !errors.Is(err, migrate.ErrInvalidSet) {
				t.Errorf("pending err = %v, want ErrInvalidSet", err)
			}
		})
	}
	t.Cleanup(func() {
		// Invalid sets are rejected before the database is touched.
		var exists bool
		if err := pool.QueryRow(context.Background(), "SELECT to_regclass('bothy_meta.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
			t.Errorf("to_regclass: %v", err)
		}
		if exists {
			t.Error("bookkeeping table created for an invalid set")
		}
	})
}
