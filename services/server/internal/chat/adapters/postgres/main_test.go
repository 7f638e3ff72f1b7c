package postgres_test

import (
	"testing"

	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, chatpg.Migrations())) }
