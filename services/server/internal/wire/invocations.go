package wire

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	agentsapp "bothy.example.com/server/internal/agents/app"
	chatapp "bothy.example.com/server/internal/chat/app"
)

// chatInvocations binds chat's Invocations port (a post's part in invocations, ADR 0031) to
// the agents module's use cases, converting the post's types: chat knows no agents package.
type chatInvocations struct {
	invocations *agentsapp.Invocations
}

var _ chatapp.Invocations = chatInvocations{}

// Answer implements chatapp.Invocations.
func (c chatInvocations) Answer(ctx context.Context, a chatapp.InvocationAnswer) (uuid.UUID, error) {
	return c.invocations.Answer(ctx, agentsapp.Reply{Token: a.Token, MessageID: a.MessageID, ThreadID: a.ThreadID}) //nolint:wrapcheck // Answer names itself
}

// Invoke implements chatapp.Invocations.
func (c chatInvocations) Invoke(ctx context.Context, p chatapp.InvokingPost) error {
	return c.invocations.Invoke(ctx, agentsapp.Posted{ //nolint:wrapcheck // Invoke names itself
		MessageID: p.MessageID, ThreadID: p.ThreadID, ChannelID: p.ChannelID, SpaceID: p.SpaceID,
		MentionIDs: p.MentionIDs, ParticipantIDs: p.ParticipantIDs,
	})
}

// SweepInvocations runs one sweep of invocations (agents/app.Invocations.Sweep) with the
// process's clock: every pending invocation whose last delivery is agents.invocation_ack_timeout
// old is delivered again (invocation.requested with the next attempt) or, after
// agents.invocation_max_deliveries attempts, failed (invocation.failed to its person and its
// agent); the events' actor is the system. The maintenance role runs it every
// agents.invocation_sweep_interval; tests call it after moving the fake clock.
func (a *App) SweepInvocations(ctx context.Context) (redelivered, failed int, err error) {
	info, err := a.instance.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("invocation sweep: instance: %w", err)
	}
	return a.invocations.Sweep(ctx, info.ID) //nolint:wrapcheck // Sweep names itself
}

// ExpireRuns runs one expiry of stale runs (agents/app.Runs.Expire, ADR 0032) with the
// process's clock: at most agents.run_expiry_batch queued or running runs not updated within
// agents.run_stale_after end as failed, each with its run.updated; the events' actor is the
// system. The invocation sweeper runs it on every tick; tests call it after moving the fake
// clock. It returns how many runs it ended.
func (a *App) ExpireRuns(ctx context.Context) (int, error) {
	info, err := a.instance.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("run expiry: instance: %w", err)
	}
	return a.runs.Expire(ctx, info.ID) //nolint:wrapcheck // Expire names itself
}

// runInvocationSweeper sweeps every agents.invocation_sweep_interval until ctx ends: the
// invocations (SweepInvocations), then the stale runs (ExpireRuns, one batch a tick). A failed
// sweep is logged and the next one tries again. The ticker paces the loop only: what a sweep
// decides comes from the injected clock.
func (a *App) runInvocationSweeper(ctx context.Context) {
	t := time.NewTicker(a.invocations.SweepInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, _, err := a.SweepInvocations(ctx); err != nil && ctx.Err() == nil {
				a.logger.WarnContext(ctx, "invocation sweep failed", "error", err.Error())
			}
			if _, err := a.ExpireRuns(ctx); err != nil && ctx.Err() == nil {
				a.logger.WarnContext(ctx, "run expiry failed", "error", err.Error())
			}
		}
	}
}
