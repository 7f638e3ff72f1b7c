package wire

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	agentsapp "bothy.example.com/server/internal/agents/app"
	authzhttp "bothy.example.com/server/internal/authz/adapters/httpapi"
	"bothy.example.com/server/internal/authz/adapters/nochat"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	instancehttp "bothy.example.com/server/internal/instance/adapters/httpapi"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/tx"
)

// accessConfig is every key of the identity and authz modules the process reads.
type accessConfig struct {
	identity       identityapp.Config
	scopeCacheSize int
	grantsPageSize int
}

// readAccessConfig reads the keys; bad values are collected in cfg.Err.
func readAccessConfig(cfg *config.Config) accessConfig {
	return accessConfig{
		identity:       identityapp.ConfigFrom(cfg),
		scopeCacheSize: cfg.Int(authzapp.KeyScopeCacheSize),
		grantsPageSize: cfg.Int(authzapp.KeyGrantsPageSize),
	}
}

// validate rejects values the keys' types allow but the modules cannot work
// with, naming the key.
func (c accessConfig) validate() error {
	if err := c.identity.Validate(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	switch {
	case c.scopeCacheSize < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", authzapp.KeyScopeCacheSize.Name, c.scopeCacheSize)
	case c.grantsPageSize < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", authzapp.KeyGrantsPageSize.Name, c.grantsPageSize)
	}
	return nil
}

// access is the identity, authz, agents and instance-flag modules as one
// process uses them: who is asking, may they, and the operations built on
// that. Every handler gets the one Authorizer.
type access struct {
	identity  *identityapp.Service
	bootstrap *authzapp.Bootstrapper
	flags     *instanceapp.Flags
	handlers  accessHandlers
}

// accessHandlers are the strict-server handler types of the modules, which
// the one strict server embeds.
type accessHandlers struct {
	identity *identityhttp.Server
	authz    *authzhttp.Server
	agents   *agentshttp.Server
	instance *instancehttp.Server
}

// newAccess builds the modules over the event log's instance store and
// appender, binding their ports:
//   - authz's ChannelDirectory to nochat.Directory, which truthfully reports
//     that no space and no channel exist until the chat module implements
//     the port (docs/DECISIONS.md);
//   - identity's Principals, Tokens and Directory into authz (the owner
//     bootstrap, grantee checks) and agents (the agent's principal, names);
//   - the Authorizer into every handler and into agents' list filter;
//   - the Authorizer's denial counter into registry.
func newAccess(runner *tx.Runner, log eventLog, clk clock.Clock, logger *slog.Logger, registry prometheus.Registerer, c accessConfig) (access, error) {
	idStore := identitypg.New(runner)
	ids, err := identityapp.New(identityapp.Deps{
		Store:  idStore,
		Tx:     runner,
		Clock:  clk,
		Logger: logger,
		Config: c.identity,
	})
	if err != nil {
		return access{}, err
	}

	grantStore := authzpg.New(runner)
	directory := nochat.Directory{}
	authorizer, err := authzapp.NewAuthorizer(authzapp.AuthorizerDeps{
		Grants:     grantStore,
		Versions:   log.instance,
		Directory:  directory,
		CacheSize:  c.scopeCacheSize,
		Logger:     logger,
		Registerer: registry,
	})
	if err != nil {
		return access{}, err
	}
	grants, err := authzapp.NewGrants(authzapp.GrantsDeps{
		Runner:     runner,
		Store:      grantStore,
		Counters:   log.instance,
		Appender:   log.appender,
		Instance:   log.instance,
		Directory:  directory,
		Principals: ids,
		Authorizer: authorizer,
		PageSize:   c.grantsPageSize,
	})
	if err != nil {
		return access{}, err
	}
	bootstrap, err := authzapp.NewBootstrapper(authzapp.BootstrapDeps{
		Runner:     runner,
		Store:      grantStore,
		Grants:     grants,
		Principals: ids,
		Tokens:     ids.Tokens(),
	})
	if err != nil {
		return access{}, err
	}

	agentService, err := agentsapp.New(agentsapp.Deps{
		Tx:         runner,
		Store:      agentspg.New(runner),
		Principals: ids,
		Directory:  ids,
		Appender:   log.appender,
		Authorizer: authorizer,
	})
	if err != nil {
		return access{}, fmt.Errorf("agents: %w", err)
	}

	a := access{
		identity:  ids,
		bootstrap: bootstrap,
		flags:     instanceapp.NewFlags(runner, log.instance, log.appender),
	}
	var errs []error
	a.handlers.identity, err = identityhttp.New(identityhttp.Deps{
		Authorizer: authorizer,
		Principals: ids,
		Tokens:     ids.Tokens(),
		Devices:    ids.Devices(),
	})
	errs = append(errs, err)
	a.handlers.authz, err = authzhttp.New(authzhttp.Deps{
		Authorizer: authorizer,
		Grants:     grants,
	})
	errs = append(errs, err)
	a.handlers.agents, err = agentshttp.New(agentshttp.Deps{
		Authorizer: authorizer,
		Creator:    agentService,
		Agents:     agentService,
	})
	if err != nil {
		err = fmt.Errorf("agents http: %w", err)
	}
	errs = append(errs, err)
	a.handlers.instance, err = instancehttp.New(instancehttp.Deps{
		Authorizer: authorizer,
		Instance:   log.instance,
	})
	if err != nil {
		err = fmt.Errorf("instance http: %w", err)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return access{}, err
	}
	return a, nil
}
