package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Server is what the agent needs of bothy's HTTP API, and only that: the agent owns this port
// so that its handling is tested against a hand-written fake, and bothyapi.Client implements
// it over HTTP. Every method's error is an *APIError when bothy answered with a problem.
type Server interface {
	// Me reads the calling principal, so the agent knows its own id and handle.
	Me(ctx context.Context) (Me, error)
	// EnsureConsumer creates the durable consumer at the head of the log, or returns the
	// existing one unchanged (createConsumer is an idempotent PUT).
	EnsureConsumer(ctx context.Context, name string) (Consumer, error)
	// DeleteConsumer forgets the consumer; used only after resync_required (a restore).
	DeleteConsumer(ctx context.Context, name string) error
	// ConsumerEvents reads one page after the consumer's acked_seq (listConsumerEvents).
	ConsumerEvents(ctx context.Context, name string) (EventPage, error)
	// AckConsumer moves the consumer's acked_seq forward to seq (ackEvents).
	AckConsumer(ctx context.Context, name string, seq int64) error
	// Heartbeat reports that the agent is alive (sendAgentHeartbeat).
	Heartbeat(ctx context.Context) error
	// GetMessage reads the message that invoked the agent.
	GetMessage(ctx context.Context, id string) (Message, error)
	// CreateRun starts a run in the thread; idempotencyKey makes a repeat replay the first.
	CreateRun(ctx context.Context, threadID string, in CreateRun, idempotencyKey string) (Run, error)
	// UpdateRun moves the run along its state machine.
	UpdateRun(ctx context.Context, runID string, in UpdateRun) (Run, error)
	// GetRun reads a run, to tell a repeated finish from a real conflict.
	GetRun(ctx context.Context, runID string) (Run, error)
	// PostMessage posts the reply; idempotencyKey makes a repeat replay the first.
	PostMessage(ctx context.Context, threadID string, in PostMessage, idempotencyKey string) (Message, error)
}

// Gateway opens a WebSocket session resumed from a durable consumer; bothyapi.Gateway
// implements it.
type Gateway interface {
	// Resume connects and sends resume with the consumer's name.
	Resume(ctx context.Context, consumer string) (Stream, error)
}

// Stream is one gateway session.
type Stream interface {
	// Next returns the next server frame; an error ends the session.
	Next(ctx context.Context) (Frame, error)
	// Ack sends an ack frame for the resumed consumer.
	Ack(ctx context.Context, seq int64) error
	// Close ends the session.
	Close() error
}

// Frame is a server frame of the gateway, as far as the agent reads it.
type Frame struct {
	Op     string `json:"op"`
	Event  Event  `json:"event"`
	Cursor int64  `json:"cursor"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Me is the calling principal.
type Me struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
}

// Consumer is a durable consumer.
type Consumer struct {
	Name     string `json:"name"`
	AckedSeq int64  `json:"acked_seq"`
}

// EventPage is one page of a consumer's catch-up.
type EventPage struct {
	Events     []Event `json:"events"`
	NextCursor int64   `json:"next_cursor"`
	HeadSeq    int64   `json:"head_seq"`
}

// Event is an event envelope; InvocationToken and Redelivered are the delivery-only members
// bothy adds on deliveries of an invocation to its agent.
type Event struct {
	Seq             int64           `json:"seq"`
	ID              string          `json:"id"`
	Type            string          `json:"type"`
	Payload         json.RawMessage `json:"payload"`
	Redacted        bool            `json:"redacted"`
	InvocationToken string          `json:"invocation_token"`
	Redelivered     bool            `json:"redelivered"`
}

// Invocation is the payload of invocation.requested.
type Invocation struct {
	ID        string `json:"id"`
	AgentID   string `json:"agent_id"`
	MessageID string `json:"message_id"`
	ThreadID  string `json:"thread_id"`
	ChannelID string `json:"channel_id"`
	InvokedBy string `json:"invoked_by"`
	Reason    string `json:"reason"`
	Attempt   int    `json:"attempt"`
	State     string `json:"state"`
}

// Message is a message, as far as the agent reads it.
type Message struct {
	ID           string `json:"id"`
	ThreadID     string `json:"thread_id"`
	AuthorID     string `json:"author_id"`
	ContentMD    string `json:"content_md"`
	Redacted     bool   `json:"redacted"`
	InvocationID string `json:"invocation_id,omitempty"`
}

// PostMessage is the body of postMessage.
type PostMessage struct {
	ContentMD       string `json:"content_md"`
	InvocationToken string `json:"invocation_token,omitempty"`
}

// Run is a run, as far as the agent reads it.
type Run struct {
	ID           string `json:"id"`
	ThreadID     string `json:"thread_id"`
	InvocationID string `json:"invocation_id,omitempty"`
	State        string `json:"state"`
}

// CreateRun is the body of createRun.
type CreateRun struct {
	RequestedBy  string `json:"requested_by"`
	InvocationID string `json:"invocation_id,omitempty"`
	State        string `json:"state,omitempty"`
	Progress     string `json:"progress,omitempty"`
}

// UpdateRun is the body of updateRun.
type UpdateRun struct {
	State    string `json:"state"`
	Progress string `json:"progress,omitempty"`
}

// Run states the agent uses (ADR 0027).
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// EventInvocationRequested is the event type that asks the agent to answer.
const EventInvocationRequested = "invocation.requested"

// APIError is a problem response of bothy (application/problem+json).
type APIError struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Error says which status and code bothy answered.
func (e *APIError) Error() string {
	return fmt.Sprintf("bothy answered %d %s: %s", e.Status, e.Code, e.Detail)
}

// statusOf is the HTTP status of a problem error, 0 for any other error.
func statusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// permanent tells an error that a retry cannot cure (a refusal of the request itself) from
// one worth retrying (the network, a 5xx, a rate limit, an expired or revoked credential an
// operator may fix): an invocation whose answer is refused is given up, not retried forever.
func permanent(err error) bool {
	s := statusOf(err)
	switch {
	case s == 0, s >= http.StatusInternalServerError:
		return false
	case s == http.StatusUnauthorized, s == http.StatusRequestTimeout, s == http.StatusTooManyRequests:
		return false
	default:
		return s >= http.StatusBadRequest
	}
}
