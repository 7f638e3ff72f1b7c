package agents

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// PresenceState is an agent's runtime state as heartbeats tell it (spec 03, "Presence").
type PresenceState string

// The runtime states of the API's AgentRuntimeState that heartbeats decide.
const (
	// PresenceUnknown: the agent never sent a heartbeat.
	PresenceUnknown PresenceState = "unknown"
	// PresenceOnline: the last heartbeat is at most agents.presence_idle_after old.
	PresenceOnline PresenceState = "online"
	// PresenceIdle: the last heartbeat is older than that, at most agents.presence_offline_after.
	PresenceIdle PresenceState = "idle"
	// PresenceOffline: no heartbeat for longer than agents.presence_offline_after.
	PresenceOffline PresenceState = "offline"
)

// Presence is an agent's presence as the events announced it: the state and billing mode of
// its last agent.presence_changed event, so that a snapshot plus the events after it equals a
// later snapshot.
type Presence struct {
	// AgentID is the agent.
	AgentID uuid.UUID
	// State is the announced state; PresenceUnknown for an agent without heartbeats.
	State PresenceState
	// ReportedBillingMode is the billing mode announced with it; empty when none.
	ReportedBillingMode string
	// LastHeartbeatAt is when the agent's last heartbeat arrived, in UTC; zero for none.
	LastHeartbeatAt time.Time
}

// Presences reads the announced presence of agents, for the snapshot.
type Presences interface {
	// Presences returns the presence of each agent of ids that sent a heartbeat; an agent
	// without one is absent from the map (its state is PresenceUnknown). Authorizes nothing:
	// the caller lists only agents the actor may read.
	Presences(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]Presence, error)
}
