package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Run is the agent's life until ctx ends: it reads who it is, creates its consumer (or finds
// it), heartbeats, and consumes: through the gateway resumed from the consumer while the
// socket lives, through the consumer's REST page while it is down, reconnecting with a
// jittered exponential backoff. It returns nil when ctx ends, an error only when it cannot
// start (its token refused at the first call).
func (a *Agent) Run(ctx context.Context) error {
	me, err := retry(ctx, a, "read the agent's principal", a.srv.Me)
	if err != nil {
		return err
	}
	a.me = me
	if _, err := retry(ctx, a, "create the consumer", func(ctx context.Context) (Consumer, error) {
		return a.srv.EnsureConsumer(ctx, a.cfg.Consumer)
	}); err != nil {
		return err
	}
	a.log.InfoContext(ctx, "echo agent started", "agent_id", me.ID, "handle", me.Handle, "consumer", a.cfg.Consumer)

	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		a.heartbeats(ctx)
	}()
	defer func() { <-hbDone }()

	b := backoff{min: a.cfg.MinBackoff, max: a.cfg.MaxBackoff}
	for ctx.Err() == nil {
		caughtUp, err := a.stream(ctx)
		if ctx.Err() != nil {
			break
		}
		if caughtUp {
			b.reset()
		}
		a.log.WarnContext(ctx, "gateway session ended; polling the consumer until it is back", "err", err)
		if errors.Is(err, errResync) {
			a.resync(ctx)
		}
		if err := a.drain(ctx); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "consumer page failed", "err", err)
			if errors.Is(err, errResync) {
				a.resync(ctx)
			}
		}
		sleep(ctx, b.next())
	}
	return nil
}

// stream is one gateway session: every event handled, then acknowledged by an ack frame;
// cursor and catchup.complete frames acknowledged too, so that ranges the agent may not see
// are passed over once. While it catches up, acks are spaced by Config.CatchUpAckInterval
// (catchup.complete's always goes); once live, each goes at once. It reports whether it
// reached catchup.complete.
func (a *Agent) stream(ctx context.Context) (bool, error) {
	s, err := a.gw.Resume(ctx, a.cfg.Consumer)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = s.Close() }()
	caughtUp := false
	var (
		acked, pending int64     // the last seq acknowledged, the last one handled
		ackedAt        time.Time // when the last ack went
	)
	ack := func(seq int64, now bool) error {
		pending = max(pending, seq)
		if pending <= acked || (!now && !caughtUp && time.Since(ackedAt) < a.cfg.CatchUpAckInterval) {
			return nil
		}
		if err := s.Ack(ctx, pending); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		acked, ackedAt = pending, time.Now()
		return nil
	}
	for {
		f, err := s.Next(ctx)
		if err != nil {
			return caughtUp, err
		}
		switch f.Op {
		case "event":
			if _, err := a.Handle(ctx, f.Event); err != nil {
				return caughtUp, err
			}
			err = ack(f.Event.Seq, false)
		case "cursor":
			err = ack(f.Cursor, false)
		case "catchup.complete":
			caughtUp = true
			err = ack(f.Cursor, true)
		case "resync_required":
			return caughtUp, errResync
		case "error":
			return caughtUp, fmt.Errorf("gateway error %s: %s", f.Code, f.Detail)
		}
		if err != nil {
			return caughtUp, err
		}
	}
}

// drain reads the consumer's REST pages until it is caught up, handling and acknowledging
// each page (its next_cursor).
func (a *Agent) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		page, err := a.srv.ConsumerEvents(ctx, a.cfg.Consumer)
		if err != nil {
			if statusOf(err) == http.StatusGone {
				return errResync
			}
			return fmt.Errorf("read the consumer's events: %w", err)
		}
		for _, ev := range page.Events {
			if _, err := a.Handle(ctx, ev); err != nil {
				return err
			}
		}
		if len(page.Events) > 0 || page.NextCursor > 0 {
			if err := a.srv.AckConsumer(ctx, a.cfg.Consumer, page.NextCursor); err != nil {
				return fmt.Errorf("ack the page: %w", err)
			}
		}
		if len(page.Events) == 0 && page.NextCursor >= page.HeadSeq {
			return nil
		}
	}
	return nil
}

// resync deletes the consumer and creates it again at the head, as ADR 0026 says after a
// restore; what happened in between is lost to the agent (an invocation left unanswered is
// redelivered or failed by bothy).
func (a *Agent) resync(ctx context.Context) {
	a.log.WarnContext(ctx, "consumer cannot be served; creating it again at the head", "consumer", a.cfg.Consumer)
	if err := a.srv.DeleteConsumer(ctx, a.cfg.Consumer); err != nil {
		a.log.WarnContext(ctx, "delete the consumer", "err", err)
		return
	}
	if _, err := a.srv.EnsureConsumer(ctx, a.cfg.Consumer); err != nil {
		a.log.WarnContext(ctx, "create the consumer", "err", err)
	}
}

// heartbeats reports the agent alive every Config.HeartbeatInterval until ctx ends.
func (a *Agent) heartbeats(ctx context.Context) {
	t := time.NewTicker(a.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		if err := a.srv.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			a.log.WarnContext(ctx, "heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retry calls f until it succeeds, ctx ends, or bothy refuses it for good.
func retry[T any](ctx context.Context, a *Agent, what string, f func(context.Context) (T, error)) (T, error) {
	b := backoff{min: a.cfg.MinBackoff, max: a.cfg.MaxBackoff}
	for {
		v, err := f(ctx)
		if err == nil {
			return v, nil
		}
		if permanent(err) || statusOf(err) == http.StatusUnauthorized {
			return v, fmt.Errorf("%s: %w", what, err)
		}
		a.log.WarnContext(ctx, what+" failed; retrying", "err", err)
		sleep(ctx, b.next())
		if ctx.Err() != nil {
			return v, fmt.Errorf("%s: %w", what, context.Cause(ctx))
		}
	}
}

// backoff is an exponential backoff with full jitter between min and the current ceiling.
type backoff struct {
	min, max, cur time.Duration
}

// next is the wait before the next attempt.
func (b *backoff) next() time.Duration {
	if b.cur < b.min {
		b.cur = b.min
	}
	ceil := b.cur
	b.cur = min(b.cur*2, b.max)
	if ceil <= b.min {
		return b.min
	}
	return b.min + rand.N(ceil-b.min) //nolint:gosec // jitter, not a secret.
}

// reset starts the backoff over after a session that worked.
func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
