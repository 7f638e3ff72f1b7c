package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents/domain"
)

// TestCheckTransition walks every pair of states against the machine of ADR 0027.
func TestCheckTransition(t *testing.T) {
	t.Parallel()
	const (
		q, r, s, f, c = domain.RunQueued, domain.RunRunning, domain.RunSucceeded, domain.RunFailed, domain.RunCancelled
	)
	allowed := map[[2]domain.RunState]bool{
		{q, q}: true, {q, r}: true, {q, c}: true,
		{r, r}: true, {r, s}: true, {r, f}: true, {r, c}: true,
	}
	for _, from := range domain.RunStates() {
		for _, to := range append(domain.RunStates(), "paused", "") {
			err := domain.CheckTransition(from, to)
			switch {
			case from.Final():
				if !errors.Is(err, domain.ErrRunFinished) {
					t.Errorf("%s -> %q = %v, want ErrRunFinished", from, to, err)
				}
			case allowed[[2]domain.RunState{from, to}]:
				if err != nil {
					t.Errorf("%s -> %s = %v, want allowed", from, to, err)
				}
			default:
				if !errors.Is(err, domain.ErrIllegalTransition) {
					t.Errorf("%s -> %q = %v, want ErrIllegalTransition", from, to, err)
				}
			}
		}
	}
}

func TestRunStateFinalAndValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state        domain.RunState
		valid, final bool
	}{
		{domain.RunQueued, true, false},
		{domain.RunRunning, true, false},
		{domain.RunSucceeded, true, true},
		{domain.RunFailed, true, true},
		{domain.RunCancelled, true, true},
		{"paused", false, false},
		{"", false, false},
	}
	for _, tc := range tests {
		if got := tc.state.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %v, want %v", tc.state, got, tc.valid)
		}
		if got := tc.state.Final(); got != tc.final {
			t.Errorf("%q.Final() = %v, want %v", tc.state, got, tc.final)
		}
	}
}

func TestStartState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want domain.RunState
		problem  bool
	}{
		{"", domain.RunQueued, false},
		{domain.RunQueued, domain.RunQueued, false},
		{domain.RunRunning, domain.RunRunning, false},
		{domain.RunSucceeded, domain.RunSucceeded, true},
		{domain.RunCancelled, domain.RunCancelled, true},
		{"paused", "paused", true},
	}
	for _, tc := range tests {
		got, problem := domain.StartState(tc.in)
		if got != tc.want || (problem != "") != tc.problem {
			t.Errorf("StartState(%q) = %q, %q; want %q, problem %v", tc.in, got, problem, tc.want, tc.problem)
		}
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		max            int
		problem        bool
	}{
		{"empty", "", "", 10, false},
		{"trimmed", "  reading \n", "reading", 10, false},
		{"exactly the bound in runes", strings.Repeat("é", 10), strings.Repeat("é", 10), 10, false},
		{"one over the bound", strings.Repeat("a", 11), strings.Repeat("a", 11), 10, true},
		{"line feeds and tabs", "step 1\n\tstep 2", "step 1\n\tstep 2", 20, false},
		{"control character", "bell\a", "bell\a", 20, true},
		{"invalid UTF-8", "\xff", "\xff", 20, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, problem := domain.Progress(tc.in, tc.max)
			if got != tc.want || (problem != "") != tc.problem {
				t.Fatalf("Progress(%q, %d) = %q, %q; want %q, problem %v", tc.in, tc.max, got, problem, tc.want, tc.problem)
			}
		})
	}
}

func TestRunApply(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	agent, sam := uuid.New(), uuid.New()
	base := domain.Run{ID: uuid.New(), AgentID: agent, RequestedBy: sam, State: domain.RunRunning, Progress: "reading", Version: 2, CreatedAt: t0, UpdatedAt: t0}
	text := "posted"
	tests := []struct {
		name   string
		from   domain.Run
		change domain.Change
		want   func(domain.Run) domain.Run
		err    error
	}{
		{
			name: "progress only keeps the state", from: base,
			change: domain.Change{To: domain.RunRunning, Progress: &text, By: agent, At: t1},
			want: func(r domain.Run) domain.Run {
				r.Progress, r.Version, r.UpdatedAt = text, 3, t1
				return r
			},
		},
		{
			name: "success ends the run and keeps the progress", from: base,
			change: domain.Change{To: domain.RunSucceeded, By: agent, At: t1},
			want: func(r domain.Run) domain.Run {
				r.State, r.Version, r.UpdatedAt, r.EndedAt = domain.RunSucceeded, 3, t1, t1
				return r
			},
		},
		{
			name: "a cancellation records who cancelled", from: base,
			change: domain.Change{To: domain.RunCancelled, By: sam, At: t1},
			want: func(r domain.Run) domain.Run {
				r.State, r.Version, r.UpdatedAt, r.EndedAt, r.CancelledBy = domain.RunCancelled, 3, t1, t1, sam
				return r
			},
		},
		{
			name: "a finished run does not change", from: func() domain.Run { r := base; r.State = domain.RunFailed; return r }(),
			change: domain.Change{To: domain.RunCancelled, By: sam, At: t1}, err: domain.ErrRunFinished,
		},
		{
			name: "no way back to queued", from: base,
			change: domain.Change{To: domain.RunQueued, By: agent, At: t1}, err: domain.ErrIllegalTransition,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.from.Apply(tc.change)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || got != tc.from {
					t.Fatalf("Apply = %+v, %v; want the run unchanged and %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if want := tc.want(tc.from); got != want {
				t.Fatalf("Apply = %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestRunExpire: a queued or running run expires as failed (ADR 0032), from either state,
// with the expiry's progress text, one version more and ended at the expiry; a finished run
// does not expire.
func TestRunExpire(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	at := created.Add(time.Hour)
	for _, from := range domain.RunStates() {
		r := domain.Run{ID: uuid.New(), State: from, Progress: "Reading", Version: 3, CreatedAt: created, UpdatedAt: created}
		if from.Final() {
			r.EndedAt = created
		}
		got, err := r.Expire(at, "Expired.")
		if from.Final() {
			if !errors.Is(err, domain.ErrRunFinished) || got != r {
				t.Errorf("Expire of a %s run = %+v, %v; want it unchanged and ErrRunFinished", from, got, err)
			}
			continue
		}
		want := r
		want.State, want.Progress, want.Version, want.UpdatedAt, want.EndedAt = domain.RunFailed, "Expired.", 4, at, at
		if err != nil || got != want {
			t.Errorf("Expire of a %s run = %+v, %v; want %+v", from, got, err, want)
		}
	}
}
