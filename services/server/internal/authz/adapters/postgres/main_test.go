package postgres_test

import (
	"testing"

	"github.com/google/uuid"

	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

// The store's tests need no other module's tables: authz stores principal and resource ids
// without foreign keys. The instance row only gives instance grants a realistic id. The use
// cases' tests over every module's adapters are in authz/app.
func TestMain(m *testing.M) {
	leaktest.Exit(pgtest.Main(m, instancepg.Migrations(), authzpg.Migrations()))
}

// env is one test's migrated database with the store under test.
type env struct {
	runner     *tx.Runner
	store      *authzpg.Store
	instanceID uuid.UUID
}

func newEnv(t *testing.T) *env {
	t.Helper()
	runner := tx.NewRunner(pgtest.New(t))
	info, err := instancepg.New(runner).Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("instance: %v", err)
	}
	e := &env{runner: runner, store: authzpg.New(runner)}
	e.instanceID = info.ID
	return e
}
