package sync

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Consumer is a durable consumer (spec 03, "Durable consumers"): a named cursor of one agent
// or app that the server keeps, so that a client which crashed or lost its acks continues
// where it acknowledged instead of where it last read.
type Consumer struct {
	// PrincipalID is the agent or app the consumer belongs to; names are unique per principal.
	PrincipalID uuid.UUID
	// Name names the consumer (domain.ValidConsumerName).
	Name string
	// AckedSeq is the cursor: every event up to it is acknowledged, catch-up continues after
	// it. It only ever grows.
	AckedSeq int64
	// SyncEpoch is the sync epoch the consumer was created in; catch-up checks the cursor
	// against it, so after a restore the consumer answers epoch_changed.
	SyncEpoch uuid.UUID
	// CreatedAt is when it was created, UpdatedAt when it was created or an ack last moved
	// it, both in UTC.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Consumers keeps the durable consumers of the actor in ctx: made for agents and apps, open to
// every principal that may catch up. Every method authorizes events.catch_up on the instance
// first (apps: the events:subscribe scope), as catch-up does.
// Names are checked by domain.ValidConsumerName (a problem.Validation naming name).
type Consumers interface {
	// Ensure returns the actor's consumer name, creating it at the head of the log (in the
	// current sync epoch) when it does not exist; created tells which. A principal holds at
	// most sync.max_consumers_per_principal consumers: one more is problem.ErrConflict.
	Ensure(ctx context.Context, name string) (c Consumer, created bool, err error)
	// Get returns the actor's consumer name; problem.ErrNotFound when it has none.
	Get(ctx context.Context, name string) (Consumer, error)
	// List returns the actor's consumers by name; empty, not nil, for none.
	List(ctx context.Context) ([]Consumer, error)
	// Delete forgets the actor's consumer name; deleting one that does not exist succeeds.
	Delete(ctx context.Context, name string) error
	// Ack moves the consumer's AckedSeq forward to seq: never back (seq at or below AckedSeq
	// changes nothing and returns the consumer as it is), idempotently. A negative seq is a
	// problem.Validation naming seq; a seq above the head of the log, or a consumer of an
	// earlier sync epoch, is problem.ErrConflict; an unknown consumer problem.ErrNotFound.
	Ack(ctx context.Context, name string, seq int64) (Consumer, error)
	// Events is one page of catch-up (CatchUp.Check, then CatchUp.Page, for the actor in ctx)
	// after the consumer's AckedSeq, or after in.After when the client reads ahead of its
	// acks and it is above AckedSeq, checked against the consumer's SyncEpoch. A cursor that
	// cannot be served is the result's Reason, as CatchUp.Check gives it (CheckResult.Err); a
	// negative in.After is a problem.Validation naming after; Page's *ResyncError is returned
	// as an error. Nothing but Ack moves the consumer.
	Events(ctx context.Context, name string, in ConsumerEventsInput) (CheckResult, PageResult, error)
}

// ConsumerEventsInput is where a consumer's page starts and how long it is.
type ConsumerEventsInput struct {
	// After, when AfterGiven, is the client's cursor (a previous page's next_cursor): the page
	// starts after the greater of it and the consumer's AckedSeq, so a client may ask for the
	// next page before its ack of the last one arrived. Acknowledged events are never
	// delivered again this way, whoever acknowledged them.
	After      int64
	AfterGiven bool
	// Limit is the most events of the page, as PageInput.Limit.
	Limit int
}
