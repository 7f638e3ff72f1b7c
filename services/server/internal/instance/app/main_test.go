package app_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// The flag use cases are tested on PostgreSQL with the real appender, so that "exactly one
// flags.updated, and nothing on rollback" is checked on the event log itself.
func TestMain(m *testing.M) {
	code := pgtest.Main(m, instancepg.Migrations(), syncpg.Migrations())
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "instance app test: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
