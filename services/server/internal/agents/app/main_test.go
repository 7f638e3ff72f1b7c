package app_test

import (
	"testing"

	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

// The use cases are tested on PostgreSQL with the real identity module (principals and the
// handle rules), the real profile store and the real event log, so that "principal, profile
// and agent.created in one transaction" is checked on the tables themselves.
func TestMain(m *testing.M) {
	leaktest.Exit(pgtest.Main(m, instancepg.Migrations(), identitypg.Migrations(), agentspg.Migrations(), syncpg.Migrations()))
}
