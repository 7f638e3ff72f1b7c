package wire

import (
	"fmt"

	authzapp "bothy.example.com/server/internal/authz/app"
	synchttp "bothy.example.com/server/internal/sync/adapters/httpapi"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// buildSync builds the sync module's read side and personal data, last, since it reads every
// other module: personal data (placed by chat, chatPlaces), catch-up (the log, its check
// state, identity's principals and the system as event actors, the agents' invocation
// tokens), the durable consumers over catch-up, and the snapshot over chat's listings,
// personal data, the agents, their presence and runs, and the instance's flags; and the
// handlers of all four.
func (m *modules) buildSync(b base, c syncapp.Config, st stores, authorizer *authzapp.Authorizer) error {
	personal, err := syncapp.NewPersonal(syncapp.PersonalDeps{
		Runner: b.runner, Store: st.personal, Authorizer: authorizer, Appender: b.log.appender, Clock: b.clock,
		Places: chatPlaces{threads: m.chat.Threads(), channels: m.chat.Channels()},
		Config: c.Personal,
	})
	if err != nil {
		return fmt.Errorf("personal data: %w", err)
	}
	reader := syncpg.NewReader(b.runner)
	check := checkState{runner: b.runner, instance: b.log.instance, log: reader}
	actors := eventActors{principals: m.identity, instance: b.log.instance}
	catchUp, err := syncapp.NewCatchUp(syncapp.CatchUpDeps{
		Log: reader, State: check, Authorizer: authorizer, Directory: actors, Tokens: m.invocations, Config: c.CatchUp,
	})
	if err != nil {
		return fmt.Errorf("catch-up: %w", err)
	}
	consumerStore := syncpg.NewConsumerStore(b.runner)
	head := snapshotState{runner: b.runner, instance: b.log.instance}
	consumers, err := syncapp.NewConsumers(syncapp.ConsumersDeps{
		Store: consumerStore, CatchUp: catchUp, PageState: consumerPageState{check: check, consumers: consumerStore},
		Checker: catchUp, Head: head, Authorizer: authorizer, Clock: b.clock, Config: c.Consumers,
	})
	if err != nil {
		return fmt.Errorf("consumers: %w", err)
	}
	snapshot, err := syncapp.NewSnapshot(syncapp.SnapshotDeps{
		Versions: b.log.instance, State: head, Authorizer: authorizer, Principals: m.identity, Instance: b.log.instance,
		Spaces: m.chat.Spaces(), Channels: m.chat.Channels(), Threads: m.chat.Threads(), Mentions: m.chat.Mentions(),
		Personal: personal, Agents: m.agents, Presences: m.presence, Flags: m.flags, Runs: runSummaries{runs: m.runs},
		Encoder:  syncapp.SnapshotEncoderFunc(synchttp.EncodeSnapshot),
		Parallel: c.SnapshotParallelism,
	})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	m.personal = personal
	m.sync = syncShared{authorizer: authorizer, identity: m.identity, actors: actors, catchUp: catchUp, snapshot: snapshot, consumers: consumers}
	m.handlers.personal, err = synchttp.New(synchttp.Deps{
		Authorizer: authorizer, Personal: personal, CatchUp: catchUp, Snapshot: snapshot, Consumers: consumers,
	})
	if err != nil {
		return fmt.Errorf("sync http: %w", err)
	}
	return nil
}
