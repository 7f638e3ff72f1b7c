package postgres_test

import (
	"testing"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, instancepg.Migrations())) }
