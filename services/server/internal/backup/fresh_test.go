package backup_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/backup"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// toolFor is the tool wire.Backups builds, with Migrate replaced by migrate.
func toolFor(t *testing.T, migrate func(ctx context.Context, url string) (int, error)) *backup.Tool {
	t.Helper()
	return backup.New(backup.Deps{
		Open: func(ctx context.Context, url string) (backup.Ports, func(), error) {
			pool, err := wire.NewPool(ctx, url, 1)
			if err != nil {
				return backup.Ports{}, nil, err
			}
			store := instancepg.New(tx.NewRunner(pool))
			return backup.Ports{Instance: instanceapp.NewEpoch(store), Versions: store}, pool.Close, nil
		},
		Migrate: migrate,
		Schemas: []string{"bothy_meta", "instance"},
		Logger:  wiretest.TestLogger(t),
	})
}

// databasesLike lists the databases whose name starts with prefix, on a connection to url's.
func databasesLike(t *testing.T, rawURL, prefix string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(t.Context())) }()
	rows, err := conn.Query(t.Context(), "SELECT datname FROM pg_catalog.pg_database WHERE starts_with(datname, $1) ORDER BY datname", prefix)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func databaseName(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// TestRestoreThatFailsAfterPgRestoreKeepsTheDatabase: a failure after pg_restore succeeded (the
// migrations of the restored database) leaves the old database serving as it was, and no
// fresh database behind (ADR 0035).
func TestRestoreThatFailsAfterPgRestoreKeepsTheDatabase(t *testing.T) {
	t.Parallel()
	url := newInstance(t, "kept.flag", false)
	file := backUp(t, url)
	defineFlag(t, url, "after.backup")
	before := readState(t, url)
	broken := errors.New("the migrations failed")
	migrated := ""
	_, err := toolFor(t, func(_ context.Context, fresh string) (int, error) {
		migrated = fresh
		return 0, broken
	}).Restore(t.Context(), url, backup.RestoreOptions{File: file})
	if !errors.Is(err, broken) {
		t.Fatalf("Restore = %v, want the migrations' failure", err)
	}
	if migrated == "" || databaseName(t, migrated) == databaseName(t, url) {
		t.Fatalf("the restore migrated %q, want a fresh database beside %s", migrated, databaseName(t, url))
	}
	if after := readState(t, url); after.instanceID != before.instanceID || after.epoch != before.epoch || len(after.flags) != len(before.flags) {
		t.Fatalf("after the failed restore the database holds %+v, want %+v", after, before)
	}
	if left := databasesLike(t, url, databaseName(t, url)+"_"); len(left) != 0 {
		t.Fatalf("the failed restore left the databases %v", left)
	}
}

// TestRestoreNeedsTheRightToSwitch: a role that may not create a database beside the old one
// is refused before anything changes, with ErrCannotSwitch.
func TestRestoreNeedsTheRightToSwitch(t *testing.T) {
	t.Parallel()
	url := newInstance(t, "kept.flag", false)
	file := backUp(t, url)
	role := "restorer_" + strings.ReplaceAll(ids.New().String(), "-", "")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), fmt.Sprintf("CREATE ROLE %s LOGIN NOCREATEDB NOSUPERUSER", role)); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(t.Context())
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
			_ = c.Close(context.Background())
		}
	})
	u, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	asRole := fmt.Sprintf("postgres://%s@%s:%d/%s", role, u.Host, u.Port, u.Database)
	_, err = wire.Restore(t.Context(), configFor(t, asRole), asRole, wiretest.TestLogger(t), wire.RestoreOptions{File: file})
	if !errors.Is(err, backup.ErrCannotSwitch) {
		t.Fatalf("Restore as a role without CREATEDB = %v, want ErrCannotSwitch", err)
	}
	if left := databasesLike(t, url, databaseName(t, url)+"_"); len(left) != 0 {
		t.Fatalf("the refused restore left the databases %v", left)
	}
}

// TestRestoreRefusesToSwitchUnderANewSession: a session that connects to the database while
// the fresh one is being filled (a bothy serve started meanwhile) stops the switch with
// ErrDatabaseInUse; the old database serves as it was and the fresh one is gone.
func TestRestoreRefusesToSwitchUnderANewSession(t *testing.T) {
	t.Parallel()
	url := newInstance(t, "kept.flag", false)
	file := backUp(t, url)
	defineFlag(t, url, "after.backup")
	before := readState(t, url)
	var intruder *pgx.Conn
	_, err := toolFor(t, func(ctx context.Context, _ string) (int, error) {
		var err error
		intruder, err = pgx.Connect(ctx, url)
		return 0, err
	}).Restore(t.Context(), url, backup.RestoreOptions{File: file})
	if intruder == nil {
		t.Fatalf("Restore = %v before it migrated", err)
	}
	_ = intruder.Close(t.Context())
	if !errors.Is(err, backup.ErrDatabaseInUse) {
		t.Fatalf("Restore with a session connected meanwhile = %v, want ErrDatabaseInUse", err)
	}
	if after := readState(t, url); after.instanceID != before.instanceID || after.epoch != before.epoch || len(after.flags) != len(before.flags) {
		t.Fatalf("after the refused switch the database holds %+v, want %+v", after, before)
	}
	if left := databasesLike(t, url, databaseName(t, url)+"_"); len(left) != 0 {
		t.Fatalf("the refused switch left the databases %v", left)
	}
}
