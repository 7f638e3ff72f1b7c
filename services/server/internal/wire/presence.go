package wire

import (
	"context"
	"fmt"
	"time"
)

// SweepPresence runs one sweep of agent presence (agents/app.Presence.Sweep) with the
// process's clock: every agent whose state changed without a heartbeat, or whose change
// agents.presence_min_interval held back, is announced with agent.presence_changed, its actor
// the system (the instance's id: no request caused it). It returns how many events it
// appended. The maintenance role runs it every agents.presence_sweep_interval; tests call it
// after moving the fake clock.
func (a *App) SweepPresence(ctx context.Context) (int, error) {
	info, err := a.instance.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("presence sweep: instance: %w", err)
	}
	return a.presence.Sweep(ctx, info.ID) //nolint:wrapcheck // Sweep names itself
}

// runPresenceSweeper sweeps every agents.presence_sweep_interval until ctx ends; a failed
// sweep (the database away) is logged and the next one tries again. The ticker paces the
// loop only: what a sweep decides comes from the injected clock.
func (a *App) runPresenceSweeper(ctx context.Context) {
	t := time.NewTicker(a.presence.SweepInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := a.SweepPresence(ctx); err != nil && ctx.Err() == nil {
				a.logger.WarnContext(ctx, "presence sweep failed", "error", err.Error())
			}
		}
	}
}
