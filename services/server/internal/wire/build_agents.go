package wire

import (
	"fmt"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	agentsapp "bothy.example.com/server/internal/agents/app"
	authzapp "bothy.example.com/server/internal/authz/app"
)

// buildAgents builds the agents module's first step, which chat needs: the agents (their
// principals through identity), their presence and their invocations. The runs and the
// module's handlers come after chat (buildRuns).
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
	return nil
}

// buildRuns builds the agents module's runs, after chat: a run lies in a chat thread
// (chatThreadPlaces), names principals through identity and is acknowledged as its
// invocation's answer; then the module's one Server over all of its use cases (ADR 0033).
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
	m.handlers.agents, err = agentshttp.New(agentshttp.Deps{
		Authorizer: authorizer, Creator: m.agents, Agents: m.agents,
		Heartbeats: m.presence, Runs: runs, Invocations: m.invocations,
	})
	if err != nil {
		return fmt.Errorf("agents http: %w", err)
	}
	return nil
}
