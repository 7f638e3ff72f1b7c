package wire

import (
	"errors"
	"fmt"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	agentsapp "bothy.example.com/server/internal/agents/app"
	authzapp "bothy.example.com/server/internal/authz/app"
)

// buildAgents builds the agents module's first step, which chat needs: the agents (their
// principals through identity), their presence and their invocations, with the handlers of
// the three. The runs come after chat (buildRuns).
func (m *modules) buildAgents(b base, c agentsapp.Config, authorizer *authzapp.Authorizer) error {
	service, err := agentsapp.New(agentsapp.Deps{
		Tx:         b.runner,
		Store:      agentspg.New(b.runner),
		Principals: m.identity,
		Directory:  m.identity,
		Appender:   b.log.appender,
		Authorizer: authorizer,
	})
	if err != nil {
		return err
	}
	presence, err := agentsapp.NewPresence(agentsapp.PresenceDeps{
		Tx: b.runner, Store: agentspg.NewPresenceStore(b.runner), Appender: b.log.appender,
		Authorizer: authorizer, Clock: b.clock, Config: c.Presence,
	})
	if err != nil {
		return fmt.Errorf("presence: %w", err)
	}
	invocations, err := agentsapp.NewInvocations(agentsapp.InvocationsDeps{
		Tx: b.runner, Store: agentspg.NewInvocations(b.runner), Authorizer: authorizer,
		Appender: b.log.appender, Clock: b.clock, Config: c.Invocations,
	})
	if err != nil {
		return fmt.Errorf("invocations: %w", err)
	}
	m.agents, m.presence, m.invocations = service, presence, invocations
	var errs [3]error
	m.handlers.agents, errs[0] = agentshttp.New(agentshttp.Deps{Authorizer: authorizer, Creator: service, Agents: service})
	m.handlers.presence, errs[1] = agentshttp.NewPresence(presence)
	m.handlers.invocations, errs[2] = agentshttp.NewInvocations(invocations)
	if err := errors.Join(errs[:]...); err != nil {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}

// buildRuns builds the agents module's runs, after chat: a run lies in a chat thread
// (chatThreadPlaces), names principals through identity and is acknowledged as its
// invocation's answer; and their handlers.
func (m *modules) buildRuns(b base, c agentsapp.RunsConfig, authorizer *authzapp.Authorizer) error {
	runs, err := agentsapp.NewRuns(agentsapp.RunsDeps{
		Tx:                b.runner,
		Store:             agentspg.NewRuns(b.runner),
		Threads:           chatThreadPlaces{threads: m.chat.Threads(), channels: m.chat.Channels()},
		Directory:         m.identity,
		Authorizer:        authorizer,
		Appender:          b.log.appender,
		Clock:             b.clock,
		ProgressMaxLength: c.ProgressMaxLength,
		StaleAfter:        c.StaleAfter,
		ExpiryBatch:       c.ExpiryBatch,
		Invocations:       m.invocations,
	})
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	m.runs = runs
	if m.handlers.runs, err = agentshttp.NewRuns(runs); err != nil {
		return fmt.Errorf("runs http: %w", err)
	}
	return nil
}
