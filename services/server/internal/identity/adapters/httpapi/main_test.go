package httpapi_test

import (
	"testing"

	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, identitypg.Migrations())) }
