package postgres_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	ingestpg "bothy.example.com/server/internal/ingest/adapters/postgres"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m, ingestpg.Migrations())
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "ingest postgres test: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
