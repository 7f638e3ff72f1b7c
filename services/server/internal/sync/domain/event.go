// Package domain holds the sync module's pure rules, without I/O: the register of durable event
// types (what each type changes, who may receive it, the shape of its payload), the stored form
// of an event, the one envelope encoder that REST and the gateway both use, and the rules of
// each principal's personal data (read states, drafts, settings, the sidebar), whose
// validation errors name the API's fields (problem.Validation).
package domain

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
)

// StoredEvent is one row of the event log as readers get it back: what was appended, plus the
// seq and time the commit phase assigned, and whether the event was redacted since.
type StoredEvent struct {
	// Seq is the event's place in the global, commit-ordered, gap-free log.
	Seq int64
	// ID is the event's stable id (UUIDv7).
	ID uuid.UUID
	// Type is the registered durable type.
	Type string
	// OccurredAt is when the event was written, taken after the counter lock, so it rises with
	// Seq.
	OccurredAt time.Time
	// ActorID is the principal who caused the event.
	ActorID uuid.UUID
	// SpaceID, ChannelID and ThreadID place the event; uuid.Nil where they do not apply.
	SpaceID, ChannelID, ThreadID uuid.UUID
	// ResourceKind and ResourceID name what changed.
	ResourceKind kernel.ResourceKind
	ResourceID   uuid.UUID
	// AudienceID is the one receiver of a personal event; uuid.Nil for every other event.
	AudienceID uuid.UUID
	// ReceiveAction is what a receiver must be allowed on the event's resource to get it; empty
	// for a personal event.
	ReceiveAction kernel.Action
	// Payload is the type-specific JSON object as stored (reduced to ids once redacted); it is
	// passed to clients byte for byte.
	Payload json.RawMessage
	// Redacted is true once the event's resource was redacted.
	Redacted bool
	// CorrelationID is the request id of the request that caused the event; empty when none.
	CorrelationID string
	// TraceContext is the JSON object of W3C trace headers of an agent's request; nil when none.
	TraceContext json.RawMessage
}

// Personal reports whether the event is meant for its audience alone, which catch-up and the
// gateway decide on before any authorization.
func (e StoredEvent) Personal() bool {
	return e.AudienceID != uuid.Nil
}
