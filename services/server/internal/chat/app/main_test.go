package app_test

import (
	"testing"

	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// TestMain runs the unit tests over fakes and the use cases' integration tests over the real
// adapters of every module they touch (instance counters, identity, authz, the sync appender
// and chat's own store), on throwaway databases.
func TestMain(m *testing.M) {
	leaktest.Exit(pgtest.Main(m, instancepg.Migrations(), identitypg.Migrations(), authzpg.Migrations(),
		syncpg.Migrations(), chatpg.Migrations()))
}
