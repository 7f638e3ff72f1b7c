package wiretest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/wire"
)

// Execer runs a statement: a pool, a connection or a transaction.
type Execer interface {
	// Exec runs sql with args.
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Unmigrate drops every schema of wire.Migrations and the migration
// bookkeeping, leaving the database as bothy never migrated it, for tests
// of bothy migrate and of readiness. It fails the test when a drop fails.
func Unmigrate(t testing.TB, db Execer) {
	t.Helper()
	schemas := []string{migrate.MetaSchema}
	for _, set := range wire.Migrations() {
		schemas = append(schemas, set.Schema)
	}
	for _, s := range schemas {
		if _, err := db.Exec(t.Context(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"); err != nil {
			t.Fatalf("unmigrate: drop schema %s: %v", s, err)
		}
	}
}
