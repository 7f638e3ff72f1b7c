package wire

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	"bothy.example.com/server/internal/apigen"
	authzhttp "bothy.example.com/server/internal/authz/adapters/httpapi"
	chathttp "bothy.example.com/server/internal/chat/adapters/httpapi"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	instancehttp "bothy.example.com/server/internal/instance/adapters/httpapi"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/ops"
	synchttp "bothy.example.com/server/internal/sync/adapters/httpapi"
)

// server is the one strict server: it embeds each module's handler type,
// whose methods together cover every operation of api/openapi.yaml. A new
// module's handler is added as another embedded field; the assertion below
// fails to compile while an operation has no implementation. Every module
// names its handler type Server, so each is embedded through an alias
// (an embedded field is named after its type, and two fields named Server
// would clash).
type server struct {
	*ops.Server
	*identityServer
	*authzServer
	*agentsServer
	*instanceServer
	*chatServer
	*personalServer
}

// The modules' handler types under names that can be embedded side by side.
type (
	identityServer = identityhttp.Server
	authzServer    = authzhttp.Server
	agentsServer   = agentshttp.Server
	instanceServer = instancehttp.Server
	chatServer     = chathttp.Server
	personalServer = synchttp.Server
)

var _ apigen.StrictServerInterface = (*server)(nil)

// readiness binds ops.Readiness to the pool and the migration runner.
type readiness struct {
	pool *pgxpool.Pool
	sets []migrate.Set
}

// Ping checks that the database answers a round trip.
func (r readiness) Ping(ctx context.Context) error {
	return r.pool.Ping(ctx)
}

// PendingMigrations counts the migrations migrate.Apply would still apply.
func (r readiness) PendingMigrations(ctx context.Context) (int, error) {
	return migrate.Pending(ctx, r.pool, r.sets)
}
