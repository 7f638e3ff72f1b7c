package domain

import (
	"time"

	"github.com/google/uuid"
)

// State is an agent's runtime state (the values of State).
type State string

// The states heartbeats decide.
const (
	// StateUnknown: no heartbeat yet.
	StateUnknown State = "unknown"
	// StateOnline: the last heartbeat is at most IdleAfter old.
	StateOnline State = "online"
	// StateIdle: it is older, at most OfflineAfter.
	StateIdle State = "idle"
	// StateOffline: it is older than OfflineAfter.
	StateOffline State = "offline"
)

// PresenceThresholds are the named thresholds of presence (agents.presence_idle_after,
// agents.presence_offline_after, agents.presence_min_interval).
type PresenceThresholds struct {
	// IdleAfter: a heartbeat older than it makes the agent idle.
	IdleAfter time.Duration
	// OfflineAfter: a heartbeat older than it makes the agent offline (above IdleAfter).
	OfflineAfter time.Duration
	// MinInterval: at most one agent.presence_changed per agent per interval.
	MinInterval time.Duration
}

// PresenceAt is the state of an agent whose last heartbeat was at last, at now: online up to
// IdleAfter after it, idle up to OfflineAfter, offline beyond.
func (t PresenceThresholds) PresenceAt(last, now time.Time) State {
	age := now.Sub(last)
	switch {
	case age <= t.IdleAfter:
		return StateOnline
	case age <= t.OfflineAfter:
		return StateIdle
	default:
		return StateOffline
	}
}

// PresenceRow is what the module keeps of one agent's presence: the last heartbeat, the
// billing mode it reported, and what the last event announced.
type PresenceRow struct {
	// AgentID is the agent.
	AgentID uuid.UUID
	// LastHeartbeatAt is the last heartbeat's time.
	LastHeartbeatAt time.Time
	// ReportedBillingMode is the billing mode last reported ("" for none).
	ReportedBillingMode string
	// AnnouncedState and AnnouncedBillingMode are what the last agent.presence_changed said
	// (PresenceUnknown and "" before the first); AnnouncedAt is when (zero before the first).
	AnnouncedState       State
	AnnouncedBillingMode string
	AnnouncedAt          time.Time
}

// Announce decides whether an agent.presence_changed is due at now: when the state at now or
// the reported billing mode differs from the announced ones, and the last announcement is at
// least MinInterval old (or there was none). A change inside the interval waits for the
// sweeper, which announces the state of its own time once the interval has passed.
func (t PresenceThresholds) Announce(r PresenceRow, now time.Time) (State, bool) {
	state := t.PresenceAt(r.LastHeartbeatAt, now)
	if state == r.AnnouncedState && r.ReportedBillingMode == r.AnnouncedBillingMode {
		return state, false
	}
	if !r.AnnouncedAt.IsZero() && now.Sub(r.AnnouncedAt) < t.MinInterval {
		return state, false
	}
	return state, true
}
