// Package agent is the echo agent's behaviour: it answers every invocation delivered through
// its durable consumer with a run and a reply that echoes the invoking message, and it is
// idempotent per invocation, so that bothy's at-least-once delivery (ADR 0026) never makes it
// answer twice. It reaches bothy only through the ports of port.go.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Agent answers invocations. Create it with New.
type Agent struct {
	srv Server
	gw  Gateway
	cfg Config
	log *slog.Logger

	// me is the agent's own principal, read at start.
	me Me
}

// Config is what an operator sets (flags or environment of cmd main).
type Config struct {
	// Consumer is the durable consumer's name.
	Consumer string
	// HeartbeatInterval is how often the agent reports that it is alive; keep it well below
	// the server's agents.presence_idle_after.
	HeartbeatInterval time.Duration
	// MinBackoff and MaxBackoff bound the jittered wait before a reconnect.
	MinBackoff, MaxBackoff time.Duration
	// ReplyDelay is a pause between starting the run and posting the reply, so that a person
	// watching sees the run running (and a test can stop the agent mid-run); zero in normal use.
	ReplyDelay time.Duration
	// CatchUpAckInterval spaces the acks while the gateway catches the agent up (before
	// catchup.complete): the latest seq is acknowledged at most once per interval, and
	// catchup.complete's cursor always, as spec 03 advises for a consumer far behind (each
	// ack is a write). Live events are acknowledged one by one; zero acknowledges every
	// event of the catch-up too. A crash redelivers what came since the last ack, which the
	// agent answers idempotently anyway.
	CatchUpAckInterval time.Duration
}

// New returns an agent over the ports.
func New(srv Server, gw Gateway, cfg Config, log *slog.Logger) *Agent {
	return &Agent{srv: srv, gw: gw, cfg: cfg, log: log}
}

// Outcome says what handling one event did; the tests read it, the loop only logs it.
type Outcome string

// Outcomes of Handle.
const (
	// Ignored: not an invocation of this agent (another event type, a redacted payload).
	Ignored Outcome = "ignored"
	// Answered: the run succeeded and the reply is in the thread (perhaps replayed).
	Answered Outcome = "answered"
	// GaveUp: bothy refused the answer for good (the channel archived, the agent's access
	// revoked); the run, when there is one, is failed, and the event is acknowledged.
	GaveUp Outcome = "gave_up"
)

// Key is the Idempotency-Key of one step of answering an invocation: derived from the
// invocation's id only, so that a redelivery, a restart or a retry of the same step replays
// the stored response instead of writing again.
func Key(invocationID, step string) string {
	return "echo:" + invocationID + ":" + step
}

// Handle processes one delivered event. A nil error means the event may be acknowledged; an
// error means it must not (a transient failure: the consumer delivers it again later).
func (a *Agent) Handle(ctx context.Context, ev Event) (Outcome, error) {
	if ev.Type != EventInvocationRequested || ev.Redacted || len(ev.Payload) == 0 {
		return Ignored, nil
	}
	var inv Invocation
	if err := json.Unmarshal(ev.Payload, &inv); err != nil {
		a.log.WarnContext(ctx, "invocation payload does not decode; skipped", "seq", ev.Seq, "err", err)
		return Ignored, nil
	}
	if inv.ID == "" || inv.ThreadID == "" || (a.me.ID != "" && inv.AgentID != "" && inv.AgentID != a.me.ID) {
		return Ignored, nil
	}
	out, err := a.answer(ctx, inv, ev.InvocationToken)
	switch {
	case err == nil:
		a.log.InfoContext(ctx, "invocation answered", "invocation_id", inv.ID, "seq", ev.Seq, "redelivered", ev.Redelivered)
		return out, nil
	case permanent(err):
		a.log.WarnContext(ctx, "invocation refused by bothy; given up", "invocation_id", inv.ID, "seq", ev.Seq, "err", err)
		return GaveUp, nil
	default:
		return "", err
	}
}

// answer runs the steps: read the message, start the run, reply, finish the run. Each write
// carries its step's Key, so repeating answer after a crash at any point writes nothing twice.
func (a *Agent) answer(ctx context.Context, inv Invocation, token string) (Outcome, error) {
	text := ""
	msg, err := a.srv.GetMessage(ctx, inv.MessageID)
	switch {
	case err == nil:
		if !msg.Redacted {
			text = msg.ContentMD
		}
	case statusOf(err) == http.StatusNotFound:
		// The message is gone or hidden from the agent now: answer without its text.
	default:
		return "", fmt.Errorf("read the invoking message: %w", err)
	}
	run, err := a.srv.CreateRun(ctx, inv.ThreadID, CreateRun{
		RequestedBy:  inv.InvokedBy,
		InvocationID: inv.ID,
		State:        RunRunning,
		Progress:     "Echoing the message",
	}, Key(inv.ID, "run"))
	if err != nil {
		return "", fmt.Errorf("create the run: %w", err)
	}
	if err := a.pause(ctx); err != nil {
		return "", err
	}
	_, err = a.srv.PostMessage(ctx, inv.ThreadID, PostMessage{
		ContentMD:       Reply(text, a.me.Handle),
		InvocationToken: token,
	}, Key(inv.ID, "reply"))
	if err != nil {
		if permanent(err) {
			if ferr := a.finish(ctx, run.ID, RunFailed, "The reply was refused"); ferr != nil {
				a.log.WarnContext(ctx, "could not fail the run", "run_id", run.ID, "err", ferr)
			}
		}
		return "", fmt.Errorf("post the reply: %w", err)
	}
	if err := a.finish(ctx, run.ID, RunSucceeded, "Replied"); err != nil {
		return "", err
	}
	return Answered, nil
}

// finish moves the run to a final state. A run that is final already (a repeat after a crash
// between the update and the ack) is done; updateRun has no Idempotency-Key, so the 409 it
// answers then is told from a real conflict by reading the run.
func (a *Agent) finish(ctx context.Context, runID, state, progress string) error {
	_, err := a.srv.UpdateRun(ctx, runID, UpdateRun{State: state, Progress: progress})
	if err == nil {
		return nil
	}
	if statusOf(err) == http.StatusConflict {
		run, gerr := a.srv.GetRun(ctx, runID)
		if gerr == nil && final(run.State) {
			return nil
		}
		if gerr != nil && !permanent(gerr) {
			return fmt.Errorf("read the run after a conflict: %w", gerr)
		}
	}
	return fmt.Errorf("finish the run: %w", err)
}

// final reports whether a run state is final (ADR 0027).
func final(state string) bool {
	return state == RunSucceeded || state == RunFailed || state == "cancelled"
}

// pause waits Config.ReplyDelay, or until ctx ends.
func (a *Agent) pause(ctx context.Context) error {
	if a.cfg.ReplyDelay <= 0 {
		return nil
	}
	t := time.NewTimer(a.cfg.ReplyDelay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting before the reply: %w", context.Cause(ctx))
	case <-t.C:
		return nil
	}
}

// Reply is the echo of text: the message without the agent's own @mention, so that the reply
// does not mention the agent again.
func Reply(text, handle string) string {
	if handle != "" {
		text = regexp.MustCompile(`(^|\s)@`+regexp.QuoteMeta(handle)+`\b`).ReplaceAllString(text, "$1")
	}
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "Echo: (nothing to echo)"
	}
	return "Echo: " + text
}

// errResync is a consumer that cannot be served any more (after a restore).
var errResync = errors.New("the consumer needs a resync")
