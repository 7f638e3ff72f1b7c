package agents

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The states of an invocation (ADR 0031), as the API and the events spell them.
const (
	// InvocationPending: delivered (or about to be) and not acknowledged yet; the sweeper
	// delivers it again after agents.invocation_ack_timeout.
	InvocationPending = "pending"
	// InvocationAcknowledged: the agent acknowledged it (ackInvocation, or a run naming it);
	// it is not delivered again.
	InvocationAcknowledged = "acknowledged"
	// InvocationAnswered: the agent replied in the thread with its token (final).
	InvocationAnswered = "answered"
	// InvocationFailed: delivered agents.invocation_max_deliveries times without an
	// acknowledgement; the invoking person was told with invocation.failed.
	InvocationFailed = "failed"
)

// The reasons of an invocation.
const (
	// ReasonMention: the message @mentions the agent.
	ReasonMention = "mention"
	// ReasonDirectMessage: the message was written in a direct message with the agent.
	ReasonDirectMessage = "direct_message"
)

// Invocation is a person's request to an agent (ADR 0031): what ackInvocation and
// getInvocation answer and what invocation.requested and invocation.failed carry.
type Invocation struct {
	// ID identifies the invocation.
	ID uuid.UUID
	// AgentID is the invoked agent.
	AgentID uuid.UUID
	// MessageID is the person's message that invoked it.
	MessageID uuid.UUID
	// ThreadID, ChannelID and SpaceID place that message (SpaceID uuid.Nil in a direct
	// message).
	ThreadID, ChannelID, SpaceID uuid.UUID
	// InvokedBy is the person who posted the message.
	InvokedBy uuid.UUID
	// Reason is ReasonMention or ReasonDirectMessage.
	Reason string
	// Attempt is how many times invocation.requested was appended for it (1 at first).
	Attempt int
	// State is one of the Invocation* states.
	State string
	// CreatedAt is when it was made (the message's transaction), in UTC.
	CreatedAt time.Time
	// ReplyMessageID is the reply that answered it; uuid.Nil until answered.
	ReplyMessageID uuid.UUID
}

// Invocations is the invocations port of the HTTP operations: ackInvocation and
// getInvocation. Every method authorizes the actor in ctx itself (see app.Invocations).
type Invocations interface {
	// Ack acknowledges an invocation of the agent in ctx with its token; idempotent.
	Ack(ctx context.Context, id uuid.UUID, token string) (Invocation, error)
	// Get returns an invocation to its agent or its invoking person.
	Get(ctx context.Context, id uuid.UUID) (Invocation, error)
}
