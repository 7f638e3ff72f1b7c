package app

import (
	"errors"
	"fmt"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// Deps are what a Service needs, all required.
type Deps struct {
	// Tx runs createAgent's writes in one transaction.
	Tx Transactor
	// Store keeps the profiles.
	Store Store
	// Principals creates the agent's identity principal in that transaction.
	Principals identity.Principals
	// Directory names the agents' principals (display name, handle) when listing.
	Directory identity.Directory
	// Appender appends agent.created in that transaction.
	Appender kernel.Appender
	// Authorizer filters the list: agent.read on each agent, in filter mode.
	Authorizer authorize.Authorizer
}

// Service implements agents.Agents and the createAgent use case.
type Service struct {
	tx         Transactor
	store      Store
	principals identity.Principals
	directory  identity.Directory
	appender   kernel.Appender
	authz      authorize.Authorizer
}

var _ agents.Agents = (*Service)(nil)

// New returns a Service over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start.
func New(deps Deps) (*Service, error) {
	var errs []error
	for _, d := range []struct {
		missing bool
		name    string
	}{
		{deps.Tx == nil, "transaction runner"},
		{deps.Store == nil, "store"},
		{deps.Principals == nil, "principals port"},
		{deps.Directory == nil, "directory port"},
		{deps.Appender == nil, "appender"},
		{deps.Authorizer == nil, "authorizer"},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	return &Service{
		tx:         deps.Tx,
		store:      deps.Store,
		principals: deps.Principals,
		directory:  deps.Directory,
		appender:   deps.Appender,
		authz:      deps.Authorizer,
	}, nil
}
