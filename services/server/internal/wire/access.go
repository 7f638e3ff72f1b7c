package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	agentshttp "bothy.example.com/server/internal/agents/adapters/httpapi"
	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	agentsapp "bothy.example.com/server/internal/agents/app"
	authzhttp "bothy.example.com/server/internal/authz/adapters/httpapi"
	authzpg "bothy.example.com/server/internal/authz/adapters/postgres"
	authzapp "bothy.example.com/server/internal/authz/app"
	chathttp "bothy.example.com/server/internal/chat/adapters/httpapi"
	chatpg "bothy.example.com/server/internal/chat/adapters/postgres"
	chatapp "bothy.example.com/server/internal/chat/app"
	chatdomain "bothy.example.com/server/internal/chat/domain"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	identityapp "bothy.example.com/server/internal/identity/app"
	ingestapp "bothy.example.com/server/internal/ingest/app"
	ingestdomain "bothy.example.com/server/internal/ingest/domain"
	instancehttp "bothy.example.com/server/internal/instance/adapters/httpapi"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/tx"
	synchttp "bothy.example.com/server/internal/sync/adapters/httpapi"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// accessConfig is every key of the identity, authz and chat modules and of sync's personal
// data and catch-up the process reads.
type accessConfig struct {
	identity       identityapp.Config
	scopeCacheSize int
	grantsPageSize int
	chat           chatapp.Config
	personal       syncapp.PersonalConfig
	catchUp        syncapp.CatchUpConfig
	// consumers holds sync.consumer_name_max_length and sync.max_consumers_per_principal.
	consumers syncapp.ConsumersConfig
	// presence holds the agents.presence_* keys and agents.max_billing_mode_length.
	presence agentsapp.PresenceConfig
	// snapshotParallelism is sync.snapshot_parallelism (NewSnapshot refuses a value below 1).
	snapshotParallelism int
	// ingest holds ingest.max_body_bytes, ingest.max_listed_files, the masker's thresholds
	// and chat's title rule; ingestErr is a masker threshold out of range.
	ingest    ingestdomain.Limits
	ingestErr error
	// ingestGHPageSize is ingest.gh_page_size.
	ingestGHPageSize int
	// threadList is chat.threads_page_size and chat.thread_excerpt_chars.
	threadList chatapp.ThreadListConfig
	// runProgressMaxLength is agents.run_progress_max_length (NewRuns refuses a value below 1).
	runProgressMaxLength int
	// runStaleAfter and runExpiryBatch are agents.run_stale_after and agents.run_expiry_batch
	// (NewRuns refuses a value of 0 or less).
	runStaleAfter  time.Duration
	runExpiryBatch int
	// invocations holds the agents.invocation_* keys.
	invocations agentsapp.InvocationConfig
}

// readAccessConfig reads the keys; bad values are collected in cfg.Err.
func readAccessConfig(cfg *config.Config) accessConfig {
	ingest, ingestErr := ingestapp.LimitsFrom(cfg, chatdomain.MaxTitleLen)
	return accessConfig{
		identity:       identityapp.ConfigFrom(cfg),
		scopeCacheSize: cfg.Int(authzapp.KeyScopeCacheSize),
		grantsPageSize: cfg.Int(authzapp.KeyGrantsPageSize),
		chat:           chatapp.ConfigFrom(cfg),
		personal:       syncapp.PersonalConfigFrom(cfg),
		catchUp:        syncapp.CatchUpConfigFrom(cfg),
		consumers:      syncapp.ConsumersConfigFrom(cfg),
		presence:       agentsapp.PresenceConfigFrom(cfg),

		snapshotParallelism:  cfg.Int(syncapp.KeySnapshotParallelism),
		ingest:               ingest,
		ingestErr:            ingestErr,
		ingestGHPageSize:     ingestapp.GHPageSizeFrom(cfg),
		threadList:           chatapp.ThreadListConfigFrom(cfg),
		runProgressMaxLength: cfg.Int(agentsapp.KeyRunProgressMaxLength),
		runStaleAfter:        cfg.Duration(agentsapp.KeyRunStaleAfter),
		runExpiryBatch:       cfg.Int(agentsapp.KeyRunExpiryBatch),
		invocations:          agentsapp.InvocationConfigFrom(cfg),
	}
}

// validate rejects values the keys' types allow but the modules cannot work
// with, naming the key.
func (c accessConfig) validate() error {
	for _, err := range []error{c.identity.Validate(), c.chat.Validate(), c.personal.Validate(), c.catchUp.Validate(), c.consumers.Validate(), c.presence.Validate(), c.ingestErr, ingestapp.CheckLimits(c.ingest), ingestapp.CheckGHPageSize(c.ingestGHPageSize), c.threadList.Validate(), c.invocations.Validate()} {
		if err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
	}
	switch {
	case c.scopeCacheSize < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", authzapp.KeyScopeCacheSize.Name, c.scopeCacheSize)
	case c.grantsPageSize < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", authzapp.KeyGrantsPageSize.Name, c.grantsPageSize)
	case c.runProgressMaxLength < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", agentsapp.KeyRunProgressMaxLength.Name, c.runProgressMaxLength)
	case c.runStaleAfter <= 0:
		return fmt.Errorf("configuration: %s is %v, want more than 0", agentsapp.KeyRunStaleAfter.Name, c.runStaleAfter)
	case c.runExpiryBatch < 1:
		return fmt.Errorf("configuration: %s is %d, want at least 1", agentsapp.KeyRunExpiryBatch.Name, c.runExpiryBatch)
	}
	return nil
}

// access is the identity, authz, agents, chat and instance-flag modules and
// sync's personal data as one process uses them: who is asking, may they,
// and the operations built on that. Every handler gets the one Authorizer.
type access struct {
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
	handlers accessHandlers
	// sync is what the gateway shares with the REST handlers (wire/gateway.go).
	sync syncShared
	// ingestLimits bound what bothy ingest git writes (wire/ingest.go).
	ingestLimits ingestdomain.Limits
	// ingestGHPageSize is ingest.gh_page_size (wire/ingest.go).
	ingestGHPageSize int
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

// accessHandlers are the strict-server handler types of the modules, which
// the one strict server embeds.
type accessHandlers struct {
	identity *identityhttp.Server
	authz    *authzhttp.Server
	agents   *agentshttp.Server
	instance *instancehttp.Server
	chat     *chathttp.Server
	personal *synchttp.Server
}

// newAccess builds the modules over the event log's instance store and
// appender, binding their ports:
//   - authz's ChannelDirectory to the chat module's store (which channels
//     and spaces exist, which space each channel lies in); the chat use cases
//     come after authz, whose Authorizer and Grants they use;
//   - sync's Places (where a thread or channel of personal data lies) to the
//     chat use cases' Threads.Get and Channels.Get;
//   - sync's catch-up to the log reader, the instance's versions, the
//     Authorizer and identity's Directory; its snapshot to those, the chat
//     listings and counters, personal data, agents, flags and the agents'
//     runs in progress (active_runs);
//   - the agents' runs to chat's Threads.Get (where a run's thread lies);
//   - identity's Principals, Tokens and Directory into authz (the owner
//     bootstrap, grantee checks) and agents (the agent's principal, names);
//   - chat's thread list (listChannelThreads) to the chat store, the
//     Authorizer and sync's read states with its unread rule (syncUnreads),
//     the snapshot's sources;
//   - the Authorizer into every handler and into agents' list filter;
//   - the Authorizer's denial counter into registry.
func newAccess(runner *tx.Runner, log eventLog, clk clock.Clock, logger *slog.Logger, registry prometheus.Registerer, c accessConfig) (access, error) {
	idStore := identitypg.New(runner)
	grantStore := authzpg.New(runner)
	floor := &authzapp.VersionFloor{}
	ids, err := identityapp.New(identityapp.Deps{
		Store:    credentialStore{Store: idStore, runner: runner, instance: log.instance},
		Tx:       runner,
		Clock:    clk,
		Logger:   logger,
		Config:   c.identity,
		Appender: log.appender,
		Owners:   instanceOwners{store: grantStore},
		Instance: instanceID{store: log.instance},
	})
	if err != nil {
		return access{}, err
	}

	chatStore := chatpg.New(runner)
	directory := chatStore
	authorizer, err := authzapp.NewAuthorizer(authzapp.AuthorizerDeps{
		Grants:     grantStore,
		Versions:   log.instance,
		Directory:  directory,
		CacheSize:  c.scopeCacheSize,
		Logger:     logger,
		Registerer: registry,
		Floor:      floor,
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
		Floor:      floor,
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

	presence, err := agentsapp.NewPresence(agentsapp.PresenceDeps{
		Tx:         runner,
		Store:      agentspg.NewPresenceStore(runner),
		Appender:   log.appender,
		Authorizer: authorizer,
		Clock:      clk,
		Config:     c.presence,
	})
	if err != nil {
		return access{}, fmt.Errorf("agent presence: %w", err)
	}
	invocations, err := agentsapp.NewInvocations(agentsapp.InvocationsDeps{
		Tx:         runner,
		Store:      agentspg.NewInvocations(runner),
		Authorizer: authorizer,
		Appender:   log.appender,
		Clock:      clk,
		Config:     c.invocations,
	})
	if err != nil {
		return access{}, fmt.Errorf("invocations: %w", err)
	}
	personalStore := syncpg.NewPersonalStore(runner)
	marker, err := syncapp.NewOwnReads(personalStore, log.appender, clk)
	if err != nil {
		return access{}, fmt.Errorf("own reads: %w", err)
	}
	chatService, err := chatapp.New(chatapp.Deps{
		Store:       chatStore,
		Tx:          runner,
		Appender:    log.appender,
		Redactor:    log.appender,
		Authorizer:  authorizer,
		Grants:      grants,
		Principals:  ids,
		OwnReads:    ownReads{reads: marker},
		Readers:     grantStore,
		Invocations: chatInvocations{invocations: invocations},
		Clock:       clk,
		Config:      c.chat,
	})
	if err != nil {
		return access{}, fmt.Errorf("chat: %w", err)
	}
	personal, err := syncapp.NewPersonal(syncapp.PersonalDeps{
		Runner:     runner,
		Store:      personalStore,
		Places:     chatPlaces{threads: chatService.Threads(), channels: chatService.Channels()},
		Authorizer: authorizer,
		Appender:   log.appender,
		Clock:      clk,
		Config:     c.personal,
	})
	if err != nil {
		return access{}, fmt.Errorf("personal data: %w", err)
	}
	threadList, err := chatapp.NewThreadList(chatapp.ThreadListDeps{
		Store:      chatStore,
		Authorizer: authorizer,
		Unreads:    syncUnreads{store: personalStore},
		Config:     c.threadList,
	})
	if err != nil {
		return access{}, err
	}
	runs, err := agentsapp.NewRuns(agentsapp.RunsDeps{
		Tx:                runner,
		Store:             agentspg.NewRuns(runner),
		Threads:           chatThreadPlaces{threads: chatService.Threads(), channels: chatService.Channels()},
		Directory:         ids,
		Authorizer:        authorizer,
		Appender:          log.appender,
		Clock:             clk,
		ProgressMaxLength: c.runProgressMaxLength,
		StaleAfter:        c.runStaleAfter,
		ExpiryBatch:       c.runExpiryBatch,
		Invocations:       invocations,
	})
	if err != nil {
		return access{}, err
	}
	reader := syncpg.NewReader(runner)
	check := checkState{runner: runner, instance: log.instance, log: reader}
	catchUp, err := syncapp.NewCatchUp(syncapp.CatchUpDeps{
		Log:        reader,
		State:      check,
		Authorizer: authorizer,
		Directory:  eventActors{principals: ids, instance: log.instance},
		Tokens:     invocations,
		Config:     c.catchUp,
	})
	if err != nil {
		return access{}, fmt.Errorf("catch-up: %w", err)
	}
	consumerStore := syncpg.NewConsumerStore(runner)
	consumers, err := syncapp.NewConsumers(syncapp.ConsumersDeps{
		Store:      consumerStore,
		CatchUp:    catchUp,
		PageState:  consumerPageState{check: check, consumers: consumerStore},
		Checker:    catchUp,
		Head:       snapshotState{runner: runner, instance: log.instance},
		Authorizer: authorizer,
		Clock:      clk,
		Config:     c.consumers,
	})
	if err != nil {
		return access{}, fmt.Errorf("consumers: %w", err)
	}
	flags := instanceapp.NewFlags(runner, log.instance, log.appender)
	snapshot, err := syncapp.NewSnapshot(syncapp.SnapshotDeps{
		Versions:   log.instance,
		State:      snapshotState{runner: runner, instance: log.instance},
		Authorizer: authorizer,
		Principals: ids,
		Instance:   log.instance,
		Spaces:     chatService.Spaces(),
		Channels:   chatService.Channels(),
		Threads:    chatService.Threads(),
		Mentions:   chatService.Mentions(),
		Personal:   personal,
		Agents:     agentService,
		Presences:  presence,
		Flags:      flags,
		Runs:       runSummaries{runs: runs},
		Encoder:    syncapp.SnapshotEncoderFunc(synchttp.EncodeSnapshot),
		Parallel:   c.snapshotParallelism,
	})
	if err != nil {
		return access{}, fmt.Errorf("snapshot: %w", err)
	}

	a := access{
		identity:  ids,
		bootstrap: bootstrap,
		flags:     flags,
		chat:      chatService,
		personal:  personal,
		grants:    grants,
		agents:    agentService,
		presence:  presence,

		invocations: invocations,
		runs:        runs,
		sync: syncShared{authorizer: authorizer, identity: ids, actors: eventActors{principals: ids, instance: log.instance},
			catchUp: catchUp, snapshot: snapshot, consumers: consumers},
	}
	a.ingestLimits = c.ingest
	a.ingestGHPageSize = c.ingestGHPageSize
	var errs []error
	listing, err := identityapp.NewListing(idStore, c.identity.PrincipalsPageSize)
	if err != nil {
		return access{}, err
	}
	a.handlers.identity, err = identityhttp.New(identityhttp.Deps{
		Authorizer: authorizer,
		Principals: ids,
		Tokens:     ids.Tokens(),
		Devices:    ids.Devices(),
		Listing:    listing,

		TokensPageSize: c.identity.TokensPageSize,
	})
	errs = append(errs, err)
	a.handlers.authz, err = authzhttp.New(authzhttp.Deps{
		Authorizer: authorizer,
		Grants:     grants,
	})
	errs = append(errs, err)
	a.handlers.agents, err = agentshttp.New(agentshttp.Deps{
		Authorizer:  authorizer,
		Creator:     agentService,
		Agents:      agentService,
		Heartbeats:  presence,
		Runs:        runs,
		Invocations: invocations,
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
	a.handlers.chat, err = chathttp.New(chathttp.Deps{
		Authorizer:       authorizer,
		Spaces:           chatService.Spaces(),
		Channels:         chatService.Channels(),
		Threads:          chatService.Threads(),
		Messages:         chatService.Messages(),
		Reactions:        chatService.Reactions(),
		Search:           chatService.Search(),
		ThreadList:       threadList,
		MessagesPageSize: c.chat.MessagesPageSize,
	})
	errs = append(errs, err)
	a.handlers.personal, err = synchttp.New(synchttp.Deps{
		Authorizer: authorizer,
		Personal:   personal,
		CatchUp:    catchUp,
		Snapshot:   snapshot,
		Consumers:  consumers,
	})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return access{}, err
	}
	return a, nil
}

// instanceOwners binds identity's Owners to authz's grants: the owners' lock (which every
// owner grant change takes too), then the owners.
type instanceOwners struct{ store *authzpg.Store }

// InstanceOwners implements identityapp.Owners.
func (o instanceOwners) InstanceOwners(ctx context.Context) ([]uuid.UUID, error) {
	return o.store.LockedOwners(ctx)
}

// instanceID binds identity's Instance to the instance store.
type instanceID struct{ store *instancepg.Store }

// InstanceID implements identityapp.Instance.
func (i instanceID) InstanceID(ctx context.Context) (uuid.UUID, error) {
	info, err := i.store.Info(ctx)
	if err != nil {
		return uuid.Nil, fmt.Errorf("instance: %w", err)
	}
	return info.ID, nil
}
