package wire

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	agentsapp "bothy.example.com/server/internal/agents/app"
	authzhttp "bothy.example.com/server/internal/authz/adapters/httpapi"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	chathttp "bothy.example.com/server/internal/chat/adapters/httpapi"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	chatapp "bothy.example.com/server/internal/chat/app"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	ingestdomain "bothy.example.com/server/internal/ingest/domain"
	instancehttp "bothy.example.com/server/internal/instance/adapters/httpapi"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/tx"
	synchttp "bothy.example.com/server/internal/sync/adapters/httpapi"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// modules is every business module of one process, built once by buildModules: the use
// cases the process's roles and commands run, and the strict-server handlers the one API
// server embeds. The App embeds it.
type modules struct {
	identity  *identityapp.Service
	bootstrap *authzapp.Bootstrapper
	flags     *instanceapp.Flags
	chat      *chatapp.Service
	personal  *syncapp.Personal
	grants    *authzapp.Grants
	agents    *agentsapp.Service
	// presence records agents' heartbeats and sweeps silent ones (wire/presence.go).
	presence *agentsapp.Presence
	// invocations are made by posts and redelivered by their sweeper (wire/invocations.go).
	invocations *agentsapp.Invocations
	// runs are expired by the same sweeper when stale (wire/invocations.go).
	runs     *agentsapp.Runs
	handlers handlers
	// sync is what the gateway shares with the REST handlers (wire/gateway.go).
	sync syncShared
	// ingest bounds what bothy ingest git writes (wire/ingest.go).
	ingest ingestConfig
}

// syncShared are the pieces the gateway uses exactly as the REST handlers do, so both
// transports follow the same rules.
type syncShared struct {
	authorizer *authzapp.Authorizer
	identity   *identityapp.Service
	actors     eventActors // names event actors: principals and the system
	catchUp    *syncapp.CatchUp
	snapshot   *syncapp.Snapshot
	// consumers are the durable consumers of agents and apps, over catchUp.
	consumers *syncapp.Consumers
}

// handlers are the strict-server handler types of the modules, which the one strict server
// embeds.
type handlers struct {
	identity *identityhttp.Server
	authz    *authzhttp.Server
	agents   *agentshttp.Server
	instance *instancehttp.Server
	chat     *chathttp.Server
	personal *synchttp.Server
}

// base is what every build function is given: the shared transaction runner, the event
// log's instance store and appender, the clock, the logger and the metrics registry.
type base struct {
	runner   *tx.Runner
	log      eventLog
	clock    clock.Clock
	logger   *slog.Logger
	registry prometheus.Registerer
}

// stores are the Postgres adapters that more than one build function binds: authz's grants
// (identity's owners, the Authorizer), chat's store (the Authorizer's channel directory) and
// sync's personal store (chat's own reads and unread counts, personal data).
type stores struct {
	identity *identitypg.Store
	grants   *authzpg.Store
	chat     *chatpg.Store
	personal *syncpg.PersonalStore
}

// buildModules builds the modules in dependency order, one build function each (build_*.go),
// binding every port to its adapter or to another module's use cases (bindings in
// places.go, actors.go, runs.go, threadlist.go, invocations.go; the batched reads in
// batchreads.go). Two modules are built in two steps, because a module after them needs
// their first step and their second needs that module: authz's Authorizer comes first (every
// handler checks with it), its grants after identity (they name principals); the agents' use
// cases come before chat (a post invokes agents), their runs after it (a run lies in a
// chat thread).
func buildModules(b base, s settings) (modules, error) {
	st := stores{
		identity: identitypg.New(b.runner),
		grants:   authzpg.New(b.runner),
		chat:     chatpg.New(b.runner),
		personal: syncpg.NewPersonalStore(b.runner),
	}
	var m modules
	authorizer, floor, err := buildAuthorizer(b, s.authz, st)
	if err != nil {
		return modules{}, err
	}
	if err := m.buildIdentity(b, s.identity, st, authorizer); err != nil {
		return modules{}, err
	}
	if err := m.buildAuthz(b, s.authz, st, authorizer, floor); err != nil {
		return modules{}, err
	}
	if err := m.buildAgents(b, s.agents, authorizer); err != nil {
		return modules{}, fmt.Errorf("agents: %w", err)
	}
	if err := m.buildChat(b, s.chat, s.threadList, st, authorizer); err != nil {
		return modules{}, err
	}
	if err := m.buildRuns(b, s.agents.Runs, authorizer); err != nil {
		return modules{}, err
	}
	if err := m.buildInstance(b, authorizer); err != nil {
		return modules{}, err
	}
	if err := m.buildSync(b, s.sync, st, authorizer); err != nil {
		return modules{}, err
	}
	m.ingest = s.ingest
	return m, nil
}

// ingestConfig is what bothy ingest git reads: the ingest module's limits (with chat's title
// rule) and gh's page size.
type ingestConfig struct {
	limits     ingestdomain.Limits
	ghPageSize int
}
