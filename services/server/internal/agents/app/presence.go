package app

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
)

// Configuration keys of presence (spec 03, "Presence").
var (
	// KeyPresenceIdleAfter: an agent whose last heartbeat is older is idle. Agents heartbeat
	// more often than this (the echo example: a third of it).
	KeyPresenceIdleAfter = config.Define("agents.presence_idle_after", config.KindDuration, "60s",
		"how long after its last heartbeat an agent is online; then it is idle (more than 0)")
	// KeyPresenceOfflineAfter: an agent whose last heartbeat is older is offline.
	KeyPresenceOfflineAfter = config.Define("agents.presence_offline_after", config.KindDuration, "5m",
		"how long after its last heartbeat an agent is offline (more than agents.presence_idle_after)")
	// KeyPresenceMinInterval bounds the agent.presence_changed events of one agent, so a
	// flapping agent cannot flood every client's log.
	KeyPresenceMinInterval = config.Define("agents.presence_min_interval", config.KindDuration, "30s",
		"least time between two agent.presence_changed events of one agent; a change inside it is announced by the sweeper once it has passed (at least 0)")
	// KeyPresenceSweepInterval paces the sweeper that turns silent agents idle and offline and
	// announces changes held back by agents.presence_min_interval.
	KeyPresenceSweepInterval = config.Define("agents.presence_sweep_interval", config.KindDuration, "5s",
		"how often the presence sweeper looks for agents whose state changed without a heartbeat (more than 0)")
	// KeyMaxBillingModeLength bounds the billing mode an agent reports, which every snapshot
	// and presence event carries.
	KeyMaxBillingModeLength = config.Define("agents.max_billing_mode_length", config.KindInt, "64",
		"most characters of the reported_billing_mode of a heartbeat; a longer one is refused with validation_failed (at least 1)")
)

// PresenceConfig is what presence reads from the configuration.
type PresenceConfig struct {
	// Thresholds are agents.presence_idle_after, agents.presence_offline_after and
	// agents.presence_min_interval.
	Thresholds domain.PresenceThresholds
	// SweepInterval is agents.presence_sweep_interval.
	SweepInterval time.Duration
	// MaxBillingModeLength is agents.max_billing_mode_length.
	MaxBillingModeLength int
}

// PresenceConfigFrom reads the presence keys; parse errors are collected in cfg.
func PresenceConfigFrom(cfg *config.Config) PresenceConfig {
	return PresenceConfig{
		Thresholds: domain.PresenceThresholds{
			IdleAfter:    cfg.Duration(KeyPresenceIdleAfter),
			OfflineAfter: cfg.Duration(KeyPresenceOfflineAfter),
			MinInterval:  cfg.Duration(KeyPresenceMinInterval),
		},
		SweepInterval:        cfg.Duration(KeyPresenceSweepInterval),
		MaxBillingModeLength: cfg.Int(KeyMaxBillingModeLength),
	}
}

// Validate reports values presence cannot work with, naming the key.
func (c PresenceConfig) Validate() error {
	var errs []error
	if c.Thresholds.IdleAfter <= 0 {
		errs = append(errs, fmt.Errorf("%s must be more than 0", KeyPresenceIdleAfter.Name))
	}
	if c.Thresholds.OfflineAfter <= c.Thresholds.IdleAfter {
		errs = append(errs, fmt.Errorf("%s must be more than %s", KeyPresenceOfflineAfter.Name, KeyPresenceIdleAfter.Name))
	}
	if c.Thresholds.MinInterval < 0 {
		errs = append(errs, fmt.Errorf("%s must be at least 0", KeyPresenceMinInterval.Name))
	}
	if c.SweepInterval <= 0 {
		errs = append(errs, fmt.Errorf("%s must be more than 0", KeyPresenceSweepInterval.Name))
	}
	if c.MaxBillingModeLength < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", KeyMaxBillingModeLength.Name))
	}
	return errors.Join(errs...)
}

// PresenceStore keeps agents.agent_presence (adapters/postgres.PresenceStore); every method
// runs in the transaction of ctx.
type PresenceStore interface {
	// Lock returns the agent's row locked for the transaction, creating it (last heartbeat
	// now, nothing announced) when missing.
	Lock(ctx context.Context, agentID uuid.UUID, now time.Time) (domain.PresenceRow, error)
	// Save writes the row back.
	Save(ctx context.Context, r domain.PresenceRow) error
	// Due returns, locked, the rows not locked elsewhere whose last announcement is at or
	// before announcedBefore (or that never announced).
	Due(ctx context.Context, announcedBefore time.Time) ([]domain.PresenceRow, error)
	// Of returns the rows of ids (unlocked).
	Of(ctx context.Context, ids []uuid.UUID) ([]domain.PresenceRow, error)
}

// AgentPresenceChanged is the durable event presence appends (spec 02): resource the agent,
// received by everyone who may read it (agent.read), at most one per agent per
// agents.presence_min_interval.
const AgentPresenceChanged = "agent.presence_changed"

// presencePayload is agent.presence_changed's payload, as sync/domain's register lists it.
type presencePayload struct {
	AgentID             string `json:"agent_id"`
	State               string `json:"state"`
	ReportedBillingMode string `json:"reported_billing_mode,omitempty"`
	LastHeartbeatAt     string `json:"last_heartbeat_at"`
}

// PresenceDeps are what Presence needs, all required.
type PresenceDeps struct {
	// Tx runs each heartbeat and each sweep in one transaction.
	Tx Transactor
	// Store keeps the presence rows.
	Store PresenceStore
	// Appender appends agent.presence_changed in that transaction.
	Appender kernel.Appender
	// Authorizer decides agent.read on the agent itself for a heartbeat.
	Authorizer authorize.Authorizer
	// Clock is the time of heartbeats and of the sweeper (a test's fake clock).
	Clock clock.Clock
	// Config holds the presence keys.
	Config PresenceConfig
}

// Presence implements agents.Presences and the heartbeat and sweep use cases.
type Presence struct {
	tx       Transactor
	store    PresenceStore
	appender kernel.Appender
	authz    authorize.Authorizer
	clock    clock.Clock
	cfg      PresenceConfig
}

var _ agents.Presences = (*Presence)(nil)

// NewPresence returns presence over deps; it fails for a missing dependency or an invalid
// configuration.
func NewPresence(deps PresenceDeps) (*Presence, error) {
	var errs []error
	for _, d := range []struct {
		missing bool
		name    string
	}{
		{deps.Tx == nil, "transaction runner"}, {deps.Store == nil, "presence store"},
		{deps.Appender == nil, "appender"}, {deps.Authorizer == nil, "authorizer"}, {deps.Clock == nil, "clock"},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agents: presence: %w", err)
	}
	return &Presence{tx: deps.Tx, store: deps.Store, appender: deps.Appender, authz: deps.Authorizer, clock: deps.Clock, cfg: deps.Config}, nil
}

// SweepInterval is agents.presence_sweep_interval, for the loop that runs Sweep.
func (p *Presence) SweepInterval() time.Duration { return p.cfg.SweepInterval }

// errNotAgent answers a heartbeat of anyone but an agent: /agents/me names no agent then.
var errNotAgent = problem.New(problem.ErrNotFound, "The caller is no agent: only agents send heartbeats.")

// Heartbeat records a heartbeat of the agent in ctx: its last heartbeat becomes now and, when
// billingMode is not nil, its reported billing mode *billingMode (at most
// agents.max_billing_mode_length characters, no control characters; else a validation error
// naming reported_billing_mode). It appends agent.presence_changed when domain's Announce says
// so. Errors: problem.ErrUnauthenticated without an actor, problem.ErrNotFound for anyone but
// an agent (agents/me is no agent then), the authorizer's refusals, the database's.
func (p *Presence) Heartbeat(ctx context.Context, billingMode *string) (agents.Presence, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return agents.Presence{}, problem.ErrUnauthenticated
	}
	// Authorized first, as every operation is (spec 04); only then is a principal that is no
	// agent told that agents/me names none.
	if err := p.authz.Authorize(ctx, kernel.ActionAgentRead, authorize.Resource{Kind: kernel.ResourceAgent, ID: a.PrincipalID}); err != nil {
		return agents.Presence{}, err
	}
	if a.Kind != actor.KindAgent {
		return agents.Presence{}, errNotAgent
	}
	if billingMode != nil {
		if err := checkBillingMode(*billingMode, p.cfg.MaxBillingModeLength); err != nil {
			return agents.Presence{}, err
		}
	}
	now := p.clock.Now()
	var out agents.Presence
	err := p.tx.RunInTx(ctx, func(ctx context.Context) error {
		r, err := p.store.Lock(ctx, a.PrincipalID, now)
		if err != nil {
			return err
		}
		r.LastHeartbeatAt = now
		if billingMode != nil {
			r.ReportedBillingMode = *billingMode
		}
		state, err := p.announce(ctx, a.PrincipalID, &r, now)
		if err != nil {
			return err
		}
		out = agents.Presence{AgentID: r.AgentID, State: agents.PresenceState(state), ReportedBillingMode: r.ReportedBillingMode, LastHeartbeatAt: now}
		return p.store.Save(ctx, r)
	})
	if err != nil {
		return agents.Presence{}, fmt.Errorf("agents: heartbeat: %w", err)
	}
	return out, nil
}

// announce appends agent.presence_changed for r at now when Announce says so, and records it
// in r; it returns the state at now either way.
func (p *Presence) announce(ctx context.Context, actorID uuid.UUID, r *domain.PresenceRow, now time.Time) (domain.State, error) {
	state, due := p.cfg.Thresholds.Announce(*r, now)
	if !due {
		return state, nil
	}
	r.AnnouncedState, r.AnnouncedBillingMode, r.AnnouncedAt = state, r.ReportedBillingMode, now
	err := p.appender.Append(ctx, kernel.Event{
		Type:         AgentPresenceChanged,
		ActorID:      actorID,
		ResourceKind: kernel.ResourceAgent,
		ResourceID:   r.AgentID,
		Payload: presencePayload{
			AgentID: r.AgentID.String(), State: string(state), ReportedBillingMode: r.ReportedBillingMode,
			LastHeartbeatAt: r.LastHeartbeatAt.Format(time.RFC3339Nano),
		},
	})
	if err != nil {
		return state, fmt.Errorf("append %s: %w", AgentPresenceChanged, err)
	}
	return state, nil
}

// Sweep announces, in one transaction, every presence whose state changed without a
// heartbeat (an agent fell silent) or whose change agents.presence_min_interval held back,
// with the clock's time; actor is the system (systemActor, the instance's id), since no
// request caused it. It returns how many events it appended.
func (p *Presence) Sweep(ctx context.Context, systemActor uuid.UUID) (int, error) {
	now := p.clock.Now()
	n := 0
	err := p.tx.RunInTx(ctx, func(ctx context.Context) error {
		rows, err := p.store.Due(ctx, now.Add(-p.cfg.Thresholds.MinInterval))
		if err != nil {
			return err
		}
		for _, r := range rows {
			before := r.AnnouncedAt
			if _, err := p.announce(ctx, systemActor, &r, now); err != nil {
				return err
			}
			if r.AnnouncedAt.Equal(before) {
				continue
			}
			n++
			if err := p.store.Save(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("agents: presence sweep: %w", err)
	}
	return n, nil
}

// Presences implements agents.Presences: the announced state of each agent of ids.
func (p *Presence) Presences(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]agents.Presence, error) {
	out := make(map[uuid.UUID]agents.Presence, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := p.store.Of(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.AgentID] = agents.Presence{
			AgentID: r.AgentID, State: agents.PresenceState(r.AnnouncedState),
			ReportedBillingMode: r.AnnouncedBillingMode, LastHeartbeatAt: r.LastHeartbeatAt,
		}
	}
	return out, nil
}

// checkBillingMode checks a reported billing mode: at most maxLen characters of valid UTF-8
// without control characters.
func checkBillingMode(s string, maxLen int) error {
	msg := ""
	switch {
	case !utf8.ValidString(s):
		msg = "must be valid UTF-8"
	case utf8.RuneCountInString(s) > maxLen:
		msg = fmt.Sprintf("must be at most %d characters", maxLen)
	default:
		for _, r := range s {
			if unicode.IsControl(r) {
				msg = "must not contain control characters"
				break
			}
		}
	}
	if msg == "" {
		return nil
	}
	return problem.Validation(problem.FieldError{Field: "reported_billing_mode", Message: msg})
}
