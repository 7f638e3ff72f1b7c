package postgres_test

import (
	"testing"

	ingestpg "bothy.example.com/server/internal/ingest/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, ingestpg.Migrations())) }
