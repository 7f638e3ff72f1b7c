package kernel

import (
	"context"

	"github.com/google/uuid"
)

// Event is one durable event a use case appends in its own transaction (spec 02, durable event
// types). It is declared in the kernel so that every writing module can append without
// depending on the sync module, which implements the Appender.
type Event struct {
	// ID is the event id; uuid.Nil lets the appender assign a UUIDv7.
	ID uuid.UUID
	// Type is a registered durable type such as "message.created"; an unregistered type is
	// refused by Append.
	Type string
	// ActorID is the principal who caused the event.
	ActorID uuid.UUID
	// SpaceID, ChannelID and ThreadID place the event for catch-up's prefilter and for
	// authorization; uuid.Nil where they do not apply.
	SpaceID, ChannelID, ThreadID uuid.UUID
	// ResourceKind is the kind of what changed; it must match the type's registered kind.
	ResourceKind ResourceKind
	// ResourceID is the id of what changed.
	ResourceID uuid.UUID
	// AudienceID is the one receiver of a personal event (the grantee, the reader, the owner);
	// uuid.Nil for every other event.
	AudienceID uuid.UUID
	// Payload is the type-specific JSON object, encoded once at Append. A json.RawMessage is
	// taken as is after a validity check; anything else goes through encoding/json.
	Payload any
	// TraceContext holds the W3C traceparent and tracestate of an agent's request, delivered
	// back only to agent receivers; nil when there is none.
	TraceContext map[string]string
}

// Appender appends durable events to the event log. It is the port every writing module uses;
// the composition root binds it to the sync module's implementation.
type Appender interface {
	// Append stages events in the transaction carried by ctx; they get their seqs and are
	// written in that transaction's commit phase, so they exist exactly when the change they
	// describe is committed. The correlation id is taken from ctx. It fails outside a
	// transaction (tx.ErrNoTransaction) and for an event its type register refuses (an
	// unregistered type, a personal type without an audience, a payload of the wrong shape).
	Append(ctx context.Context, events ...Event) error
}

// Redactor redacts the events of one resource, so that catch-up never serves deleted content.
type Redactor interface {
	// Redact marks every event of the resource of kind and id as redacted and reduces each
	// payload to its ids, in the transaction carried by ctx (an error outside one).
	Redact(ctx context.Context, kind ResourceKind, id uuid.UUID) error
}
