package domain

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// RunState is where a run stands (ADR 0027). A run moves only forward: queued, running, then
// one of the final states; cancelled is reachable from every state that is not final.
type RunState string

// The states of a run.
const (
	// RunQueued: the agent accepted the work and has not started it.
	RunQueued RunState = "queued"
	// RunRunning: the agent is working.
	RunRunning RunState = "running"
	// RunSucceeded: the agent finished the work (final).
	RunSucceeded RunState = "succeeded"
	// RunFailed: the agent gave up (final).
	RunFailed RunState = "failed"
	// RunCancelled: the agent, the requester or a manager of the channel stopped it (final).
	RunCancelled RunState = "cancelled"
)

// runStates lists every state in the order of the machine.
var runStates = []RunState{RunQueued, RunRunning, RunSucceeded, RunFailed, RunCancelled}

// RunStates returns every state, in the order of the machine; the slice is a copy.
func RunStates() []RunState { return append([]RunState(nil), runStates...) }

// Valid reports whether s is one of the states, for values read from outside.
func (s RunState) Valid() bool {
	for _, v := range runStates {
		if v == s {
			return true
		}
	}
	return false
}

// Final reports whether a run in s can no longer change: succeeded, failed or cancelled.
func (s RunState) Final() bool {
	return s == RunSucceeded || s == RunFailed || s == RunCancelled
}

// The errors of the machine, both conflicts with the run's current state (409).
var (
	// ErrRunFinished: the run is in a final state, which nothing changes.
	ErrRunFinished = errors.New("the run has finished")
	// ErrIllegalTransition: the machine has no edge from the run's state to the one asked for.
	ErrIllegalTransition = errors.New("illegal run state transition")
)

// CheckTransition reports whether a run may move from one state to another: nil for an edge
// of the machine (queued to running, running to succeeded or failed, any state that is not
// final to cancelled) and for staying in a state that is not final (a progress update);
// ErrRunFinished from a final state; ErrIllegalTransition for anything else.
func CheckTransition(from, to RunState) error {
	switch {
	case from.Final():
		return fmt.Errorf("%w: it is %s", ErrRunFinished, from)
	case !to.Valid():
		return fmt.Errorf("%w: %q is no state", ErrIllegalTransition, to)
	case from == to, to == RunCancelled:
		return nil
	case from == RunQueued && to == RunRunning:
		return nil
	case from == RunRunning && (to == RunSucceeded || to == RunFailed):
		return nil
	}
	return fmt.Errorf("%w: from %s to %s", ErrIllegalTransition, from, to)
}

// StartState checks the state a new run asks to start in: queued (also when empty) or
// running; anything else is a validation problem, returned as its message.
func StartState(s RunState) (RunState, string) {
	switch s {
	case "":
		return RunQueued, ""
	case RunQueued, RunRunning:
		return s, ""
	}
	return s, "must be queued or running"
}

// Progress returns the stored form of a run's progress text (outer space trimmed) and, when
// it is invalid, what is wrong with it ("" when valid). maxLen is the key
// agents.run_progress_max_length, in characters (runes).
func Progress(s string, maxLen int) (normalized, problem string) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return s, "must be valid UTF-8"
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return s, "must not contain control characters other than line feeds and tabs"
	case utf8.RuneCountInString(s) > maxLen:
		return s, fmt.Sprintf("must be at most %d characters", maxLen)
	}
	return s, ""
}

// Run is an agent's work in a thread on behalf of a person. Where the thread lies (channel
// and space) is recorded with it, so that every read can be authorized on the thread
// without asking the chat module.
type Run struct {
	// ID identifies the run.
	ID uuid.UUID
	// AgentID is the agent that works; only it updates the run.
	AgentID uuid.UUID
	// ThreadID, ChannelID and SpaceID place the run (SpaceID is uuid.Nil in a direct message).
	ThreadID, ChannelID, SpaceID uuid.UUID
	// RequestedBy is the person on whose behalf the agent works; that person may cancel it.
	RequestedBy uuid.UUID
	// InvocationID is the invocation the run answers; uuid.Nil when none.
	InvocationID uuid.UUID
	// State is where the run stands.
	State RunState
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

// Change is one move of a run: a new state, optionally a new progress text, by a principal at
// a time.
type Change struct {
	// To is the state asked for.
	To RunState
	// Progress replaces the progress text when not nil (already normalized by Progress).
	Progress *string
	// By is the principal who makes the change (recorded as CancelledBy on a cancellation).
	By uuid.UUID
	// At is when, in UTC.
	At time.Time
}

// Apply returns the run after c, or the machine's error (CheckTransition) with the run
// unchanged.
func (r Run) Apply(c Change) (Run, error) {
	if err := CheckTransition(r.State, c.To); err != nil {
		return r, err
	}
	next := r
	next.State = c.To
	if c.Progress != nil {
		next.Progress = *c.Progress
	}
	next.Version++
	next.UpdatedAt = c.At
	if c.To.Final() {
		next.EndedAt = c.At
	}
	if c.To == RunCancelled {
		next.CancelledBy = c.By
	}
	return next, nil
}

// ExpiredProgress is the progress text of a run the stale-run sweep failed (Run.Expire).
const ExpiredProgress = "Expired: no update within agents.run_stale_after."

// Expire returns the run failed by the stale-run sweep (ADR 0032): a queued or running run
// that nobody updated within agents.run_stale_after ends as failed at at, with progress as its
// text, even from queued, where the agent's own machine has no edge to failed (the agent is
// gone and never started it). ErrRunFinished for a finished run, which is returned unchanged.
func (r Run) Expire(at time.Time, progress string) (Run, error) {
	if r.State.Final() {
		return r, fmt.Errorf("%w: it is %s", ErrRunFinished, r.State)
	}
	next := r
	next.State, next.Progress = RunFailed, progress
	next.Version++
	next.UpdatedAt, next.EndedAt = at, at
	return next, nil
}
