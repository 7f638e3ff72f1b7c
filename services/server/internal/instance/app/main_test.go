package app_test

import (
	"testing"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// The flag use cases are tested on PostgreSQL with the real appender, so that "exactly one
// flags.updated, and nothing on rollback" is checked on the event log itself.
func TestMain(m *testing.M) {
	leaktest.Exit(pgtest.Main(m, instancepg.Migrations(), syncpg.Migrations()))
}
