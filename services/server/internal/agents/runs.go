package agents

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The states of a run (ADR 0027), as the API and the events spell them.
const (
	// RunQueued: the agent accepted the work and has not started it.
	RunQueued = "queued"
	// RunRunning: the agent is working.
	RunRunning = "running"
	// RunSucceeded: the agent finished the work (final).
	RunSucceeded = "succeeded"
	// RunFailed: the agent gave up (final).
	RunFailed = "failed"
	// RunCancelled: the run was stopped before it finished (final).
	RunCancelled = "cancelled"
)

// Run is an agent's work in a thread on behalf of a person (ADR 0027): what getRun answers,
// what the run.* events carry and, while in progress, what the snapshot's active_runs lists.
type Run struct {
	// ID identifies the run.
	ID uuid.UUID
	// AgentID is the agent that works.
	AgentID uuid.UUID
	// ThreadID is the thread it works in; ChannelID and SpaceID place that thread (SpaceID is
	// uuid.Nil in a direct message).
	ThreadID, ChannelID, SpaceID uuid.UUID
	// RequestedBy is the person on whose behalf the agent works.
	RequestedBy uuid.UUID
	// InvocationID is the invocation the run answers; uuid.Nil when none.
	InvocationID uuid.UUID
	// State is one of the Run* states.
	State string
	// Progress is the agent's last progress text; empty when none.
	Progress string
	// Version is 1 when created and one more with every change.
	Version int64
	// CreatedAt and UpdatedAt are when the run was created and last changed, in UTC.
	CreatedAt, UpdatedAt time.Time
	// EndedAt is when the run reached a final state; zero while in progress.
	EndedAt time.Time
	// CancelledBy is who cancelled the run; uuid.Nil unless it is cancelled.
	CancelledBy uuid.UUID
}

// RunInput is a new run of the agent in ctx (createRun).
type RunInput struct {
	// ThreadID is the thread the agent works in.
	ThreadID uuid.UUID
	// RequestedBy is required: a person who may read the thread.
	RequestedBy uuid.UUID
	// InvocationID links the run to an invocation; uuid.Nil for none.
	InvocationID uuid.UUID
	// State is queued (also when empty) or running.
	State string
	// Progress is optional progress text, at most agents.run_progress_max_length characters.
	Progress string
}

// RunChange is a move of a run by its agent (updateRun).
type RunChange struct {
	// State is the state asked for; staying in a state that is not final changes only the
	// progress.
	State string
	// Progress replaces the progress text when not nil.
	Progress *string
}

// Runs is the runs port: the operations createRun, getRun, updateRun and cancelRun, and the
// runs in progress for the snapshot. Every method authorizes the actor in ctx itself (see
// app.Runs for the rules and errors).
type Runs interface {
	// Create starts a run of the agent in ctx.
	Create(ctx context.Context, in RunInput) (Run, error)
	// Get returns a run whose thread the actor may read.
	Get(ctx context.Context, id uuid.UUID) (Run, error)
	// Update moves a run of the agent in ctx.
	Update(ctx context.Context, id uuid.UUID, c RunChange) (Run, error)
	// Cancel cancels a run for its requester or a manager of its channel.
	Cancel(ctx context.Context, id uuid.UUID) (Run, error)
	// InProgress returns the runs in progress (queued or running) in the threads the actor in
	// ctx may read, oldest first; an empty list when there are none.
	InProgress(ctx context.Context) ([]Run, error)
}
