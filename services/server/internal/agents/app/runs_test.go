package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
)

// runsWorld is Runs over the hand-written fakes: a thread in a space and one in a direct
// message, the agent Helper, the people Alex and Sam (readers of both threads) and Robin
// (reads neither), and the agent Other.
type runsWorld struct {
	runs  *app.Runs
	store *memRuns
	authz *tableAuthorizer
	log   *eventLog
	clock *clock.Fake

	thread, dmThread, archivedThread, channel, dm, space uuid.UUID
	helper, other, alex, sam, robin                      uuid.UUID
}

func newRunsWorld(t *testing.T) *runsWorld {
	t.Helper()
	w := &runsWorld{
		store: newMemRuns(), log: &eventLog{}, clock: clock.NewFake(start),
		thread: uuid.New(), dmThread: uuid.New(), archivedThread: uuid.New(), channel: uuid.New(), dm: uuid.New(), space: uuid.New(),
		helper: uuid.New(), other: uuid.New(), alex: uuid.New(), sam: uuid.New(), robin: uuid.New(),
	}
	w.authz = &tableAuthorizer{deny: map[decisionKey]error{}, readers: map[uuid.UUID]bool{w.alex: true, w.sam: true, w.helper: true}}
	// Instance-wide unless a test narrows it: the prefilter then admits every run.
	w.authz.scope = authz.NewScope(w.sam, 1, []authz.Grant{{PrincipalID: w.sam, ResourceKind: kernel.ResourceInstance, ResourceID: uuid.New(), Role: authz.RoleViewer}}, nil)
	dir := fakeDirectory{
		w.helper: {ID: w.helper, Kind: actor.KindAgent}, w.other: {ID: w.other, Kind: actor.KindAgent},
		w.alex: {ID: w.alex, Kind: actor.KindPerson}, w.sam: {ID: w.sam, Kind: actor.KindPerson}, w.robin: {ID: w.robin, Kind: actor.KindPerson},
	}
	places := fakePlaces{
		w.thread:         {ThreadID: w.thread, ChannelID: w.channel, SpaceID: w.space},
		w.dmThread:       {ThreadID: w.dmThread, ChannelID: w.dm},
		w.archivedThread: {ThreadID: w.archivedThread, ChannelID: w.channel, SpaceID: w.space, Archived: true},
	}
	var err error
	w.runs, err = app.NewRuns(app.RunsDeps{
		Tx: stagingTx{log: w.log}, Store: w.store, Threads: places, Directory: dir, Authorizer: w.authz,
		Appender: w.log, Clock: w.clock, ProgressMaxLength: 10, StaleAfter: 30 * time.Minute, ExpiryBatch: 2,
		// w.other doubles as the id of Helper's invocation in the direct message's thread.
		Invocations: fakeRunInvocations{w.other: w.dmThread},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// as returns a context with the principal as the actor, of kind agent for the agents.
func (w *runsWorld) as(id uuid.UUID) context.Context {
	kind := actor.KindPerson
	if id == w.helper || id == w.other {
		kind = actor.KindAgent
	}
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: kind})
}

func (w *runsWorld) create(t *testing.T, requester uuid.UUID) agents.Run {
	t.Helper()
	r, err := w.runs.Create(w.as(w.helper), agents.RunInput{ThreadID: w.thread, RequestedBy: requester})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return r
}

func TestNewRunsRefusesMissingDependencies(t *testing.T) {
	t.Parallel()
	_, err := app.NewRuns(app.RunsDeps{})
	for _, want := range []string{"transaction runner", "run store", "thread places", "directory port", "authorizer", "appender", "clock", "agents.run_progress_max_length", "agents.run_stale_after", "agents.run_expiry_batch"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("NewRuns(empty) = %v, want it to name %s", err, want)
		}
	}
}

func TestCreateRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		as      func(w *runsWorld) context.Context
		in      func(w *runsWorld) agents.RunInput
		deny    func(w *runsWorld) map[decisionKey]error
		err     error
		fields  []string
		checkOK func(t *testing.T, w *runsWorld, r agents.Run)
	}{
		{
			name: "no actor", as: func(*runsWorld) context.Context { return context.Background() },
			in:  func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex} },
			err: problem.ErrUnauthenticated,
		},
		{
			name: "no such thread",
			in:   func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: uuid.New(), RequestedBy: w.alex} },
			err:  problem.ErrNotFound,
		},
		{
			name: "a thread the agent cannot read",
			in:   func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex} },
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionMessageCreate, w.thread}: problem.ErrNotFound}
			},
			err: problem.ErrNotFound,
		},
		{
			name: "a thread the agent may not post in",
			in:   func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex} },
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionMessageCreate, w.thread}: problem.ErrForbidden}
			},
			err: problem.ErrForbidden,
		},
		{
			name: "a person", as: func(w *runsWorld) context.Context { return w.as(w.alex) },
			in:  func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex} },
			err: problem.ErrForbidden,
		},
		{
			name: "every invalid field at once",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.thread, RequestedBy: w.robin, State: "succeeded", Progress: "eleven char"}
			},
			err: problem.ErrValidation, fields: []string{"progress", "requested_by", "state"},
		},
		{
			name: "a thread of an archived channel",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.archivedThread, RequestedBy: w.alex}
			},
			err: problem.ErrConflict,
		},
		{
			name: "an invocation of another thread",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex, InvocationID: w.other}
			},
			err: problem.ErrValidation, fields: []string{"invocation_id"},
		},
		{
			name: "an unknown invocation",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex, InvocationID: uuid.New()}
			},
			err: problem.ErrValidation, fields: []string{"invocation_id"},
		},
		{
			name: "no requester",
			in:   func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread} },
			err:  problem.ErrValidation, fields: []string{"requested_by"},
		},
		{
			name: "an agent as requester",
			in:   func(w *runsWorld) agents.RunInput { return agents.RunInput{ThreadID: w.thread, RequestedBy: w.helper} },
			err:  problem.ErrValidation, fields: []string{"requested_by"},
		},
		{
			name: "an unknown requester",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.thread, RequestedBy: uuid.New()}
			},
			err: problem.ErrValidation, fields: []string{"requested_by"},
		},
		{
			name: "queued by default, progress trimmed to the bound, placed in the thread",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.thread, RequestedBy: w.alex, Progress: "  ten chars! "}
			},
			checkOK: func(t *testing.T, w *runsWorld, r agents.Run) {
				want := agents.Run{
					ID: r.ID, AgentID: w.helper, ThreadID: w.thread, ChannelID: w.channel, SpaceID: w.space, RequestedBy: w.alex,
					State: "queued", Progress: "ten chars!", Version: 1, CreatedAt: start, UpdatedAt: start,
				}
				if r != want {
					t.Fatalf("run = %+v\nwant %+v", r, want)
				}
			},
		},
		{
			name: "a run in a direct message with an invocation",
			in: func(w *runsWorld) agents.RunInput {
				return agents.RunInput{ThreadID: w.dmThread, RequestedBy: w.sam, State: "running", Progress: " Reading ", InvocationID: w.other}
			},
			checkOK: func(t *testing.T, w *runsWorld, r agents.Run) {
				want := agents.Run{
					ID: r.ID, AgentID: w.helper, ThreadID: w.dmThread, ChannelID: w.dm, RequestedBy: w.sam, InvocationID: w.other,
					State: "running", Progress: "Reading", Version: 1, CreatedAt: start, UpdatedAt: start,
				}
				if r != want {
					t.Fatalf("run = %+v\nwant %+v", r, want)
				}
				calls := w.authz.seen()
				if len(calls) != 1 || calls[0].action != kernel.ActionMessageCreate || !calls[0].res.Direct || calls[0].res.ChannelID != w.dm {
					t.Fatalf("decisions %+v, want message.create on the direct message's thread", calls)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRunsWorld(t)
			if tc.deny != nil {
				w.authz.deny = tc.deny(w)
			}
			ctx := w.as(w.helper)
			if tc.as != nil {
				ctx = tc.as(w)
			}
			r, err := w.runs.Create(ctx, tc.in(w))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Create = %v, want %v", err, tc.err)
				}
				if tc.fields != nil {
					var got []string
					for _, f := range problem.From(ctx, err).Errors {
						got = append(got, f.Field)
					}
					slices.Sort(got)
					if !slices.Equal(got, tc.fields) {
						t.Fatalf("invalid fields %v, want %v", got, tc.fields)
					}
				}
				if len(w.log.events()) != 0 || len(w.store.runs) != 0 {
					t.Fatalf("a refused run left %d events and %d runs", len(w.log.events()), len(w.store.runs))
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			tc.checkOK(t, w, r)
			events := w.log.events()
			if len(events) != 1 || events[0].Type != app.RunCreated {
				t.Fatalf("events %+v, want one run.created", events)
			}
			e := events[0]
			if e.ResourceKind != kernel.ResourceThread || e.ResourceID != r.ThreadID || e.ThreadID != r.ThreadID ||
				e.ChannelID != r.ChannelID || e.SpaceID != r.SpaceID || e.ActorID != w.helper {
				t.Fatalf("run.created is not placed on the run's thread: %+v", e)
			}
		})
	}
}

// TestRunPayload: run.created carries the whole run, absent members omitted.
func TestRunPayload(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	r := w.create(t, w.alex)
	b, err := json.Marshal(w.log.events()[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"` + r.ID.String() + `","agent_id":"` + w.helper.String() + `","thread_id":"` + w.thread.String() +
		`","channel_id":"` + w.channel.String() + `","requested_by":"` + w.alex.String() +
		`","state":"queued","progress":"","version":1,"created_at":"2026-12-01T09:30:00Z","updated_at":"2026-12-01T09:30:00Z"}`
	if string(b) != want {
		t.Fatalf("payload\n %s\nwant\n %s", b, want)
	}
}

func TestUpdateRun(t *testing.T) {
	t.Parallel()
	text := func(s string) *string { return &s }
	tests := []struct {
		name   string
		by     func(w *runsWorld) uuid.UUID
		change agents.RunChange
		deny   func(w *runsWorld) map[decisionKey]error
		err    error
		want   func(w *runsWorld, r agents.Run) agents.Run
	}{
		{name: "the agent starts it", change: agents.RunChange{State: "running", Progress: text(" Reading ")},
			want: func(_ *runsWorld, r agents.Run) agents.Run {
				r.State, r.Progress, r.Version, r.UpdatedAt = "running", "Reading", 2, start.Add(time.Minute)
				return r
			}},
		{name: "the agent cancels it", change: agents.RunChange{State: "cancelled"},
			want: func(w *runsWorld, r agents.Run) agents.Run {
				r.State, r.Version, r.UpdatedAt, r.EndedAt, r.CancelledBy = "cancelled", 2, start.Add(time.Minute), start.Add(time.Minute), w.helper
				return r
			}},
		{name: "an illegal transition", change: agents.RunChange{State: "succeeded"}, err: problem.ErrConflict},
		{name: "an unknown state", change: agents.RunChange{State: "paused"}, err: problem.ErrValidation},
		{name: "a long progress", change: agents.RunChange{State: "running", Progress: text("eleven char")}, err: problem.ErrValidation},
		{name: "another agent", by: func(w *runsWorld) uuid.UUID { return w.other }, change: agents.RunChange{State: "running"}, err: problem.ErrForbidden},
		{name: "the requester", by: func(w *runsWorld) uuid.UUID { return w.alex }, change: agents.RunChange{State: "running"}, err: problem.ErrForbidden},
		{name: "someone who cannot read the thread", by: func(w *runsWorld) uuid.UUID { return w.robin }, change: agents.RunChange{State: "running"},
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionMessageCreate, w.thread}: problem.ErrNotFound}
			}, err: problem.ErrNotFound},
		{name: "the agent no longer a member", change: agents.RunChange{State: "running"},
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionMessageCreate, w.thread}: problem.ErrForbidden}
			}, err: problem.ErrForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRunsWorld(t)
			r := w.create(t, w.alex)
			if tc.deny != nil {
				w.authz.deny = tc.deny(w)
			}
			w.clock.Advance(time.Minute)
			by := w.helper
			if tc.by != nil {
				by = tc.by(w)
			}
			got, err := w.runs.Update(w.as(by), r.ID, tc.change)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Update = %v, want %v", err, tc.err)
				}
				if stored, _ := w.store.Run(context.Background(), r.ID); stored.Version != 1 || len(w.log.events()) != 1 {
					t.Fatalf("a refused update changed the run to %+v or appended %d events", stored, len(w.log.events())-1)
				}
				return
			}
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if want := tc.want(w, r); got != want {
				t.Fatalf("run = %+v\nwant %+v", got, want)
			}
			events := w.log.events()
			if len(events) != 2 || events[1].Type != app.RunUpdated || events[1].ActorID != by {
				t.Fatalf("events %+v, want run.created then run.updated by %s", events, by)
			}
			if !slices.Contains(w.store.locked, r.ID) {
				t.Fatal("the run was changed without its row lock")
			}
		})
	}
	t.Run("no such run", func(t *testing.T) {
		t.Parallel()
		w := newRunsWorld(t)
		if _, err := w.runs.Update(w.as(w.helper), uuid.New(), agents.RunChange{State: "running"}); !errors.Is(err, problem.ErrNotFound) {
			t.Fatalf("Update = %v, want not found", err)
		}
	})
}

func TestCancelRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		by     func(w *runsWorld) uuid.UUID
		deny   func(w *runsWorld) map[decisionKey]error
		finish bool
		err    error
	}{
		{name: "the requester", by: func(w *runsWorld) uuid.UUID { return w.alex }},
		{name: "a manager of the channel", by: func(w *runsWorld) uuid.UUID { return w.sam }},
		{name: "a reader who manages nothing", by: func(w *runsWorld) uuid.UUID { return w.sam },
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionChannelUpdate, w.channel}: problem.ErrForbidden}
			}, err: problem.ErrForbidden},
		{name: "someone who cannot read the thread", by: func(w *runsWorld) uuid.UUID { return w.robin },
			deny: func(w *runsWorld) map[decisionKey]error {
				return map[decisionKey]error{{kernel.ActionThreadRead, w.thread}: problem.ErrNotFound}
			}, err: problem.ErrNotFound},
		{name: "a finished run", by: func(w *runsWorld) uuid.UUID { return w.alex }, finish: true, err: problem.ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRunsWorld(t)
			r := w.create(t, w.alex)
			if tc.finish {
				if _, err := w.runs.Update(w.as(w.helper), r.ID, agents.RunChange{State: "cancelled"}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.deny != nil {
				w.authz.deny = tc.deny(w)
			}
			by := tc.by(w)
			before := len(w.log.events())
			got, err := w.runs.Cancel(w.as(by), r.ID)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || len(w.log.events()) != before {
					t.Fatalf("Cancel = %v with %d new events, want %v and none", err, len(w.log.events())-before, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			if got.State != "cancelled" || got.CancelledBy != by || got.EndedAt.IsZero() || got.Version != 2 {
				t.Fatalf("cancelled run = %+v", got)
			}
			managed := false
			for _, c := range w.authz.seen() {
				if c.action == kernel.ActionChannelUpdate {
					managed = c.res.Kind == kernel.ResourceChannel && c.res.ID == w.channel && c.res.SpaceID == w.space
				}
			}
			if managed != (by != w.alex) {
				t.Fatalf("channel.update on the run's channel asked %v, want %v (only for someone other than the requester)", managed, by != w.alex)
			}
		})
	}
}

// TestRunsInProgress: the runs in progress, oldest first, each kept when the actor may read
// its thread (thread.read in filter mode, so a hidden run is not audited).
func TestRunsInProgress(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	first := w.create(t, w.alex)
	hidden, err := w.runs.Create(w.as(w.helper), agents.RunInput{ThreadID: w.dmThread, RequestedBy: w.alex})
	if err != nil {
		t.Fatal(err)
	}
	done := w.create(t, w.sam)
	if _, err := w.runs.Update(w.as(w.helper), done.ID, agents.RunChange{State: "cancelled"}); err != nil {
		t.Fatal(err)
	}
	w.authz.deny = map[decisionKey]error{{kernel.ActionThreadRead, w.dmThread}: problem.ErrNotFound}
	w.authz.calls = nil
	got, err := w.runs.InProgress(w.as(w.sam))
	if err != nil {
		t.Fatalf("InProgress: %v", err)
	}
	if len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("InProgress = %+v, want only %s (not %s, hidden, nor %s, finished)", got, first.ID, hidden.ID, done.ID)
	}
	for _, c := range w.authz.seen() {
		if c.action == kernel.ActionThreadRead && !c.filter {
			t.Fatalf("thread.read %+v decided outside filter mode", c)
		}
	}
	w.authz.deny[decisionKey{kernel.ActionThreadRead, w.thread}] = errBoom
	if _, err := w.runs.InProgress(w.as(w.sam)); !errors.Is(err, errBoom) {
		t.Fatalf("InProgress with a failing decision = %v, want it returned", err)
	}
	empty := newRunsWorld(t)
	if got, err := empty.runs.InProgress(empty.as(empty.alex)); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("InProgress of no runs = %#v, %v; want an empty list", got, err)
	}
}

// TestRunsInProgressPrefilter: the store is asked only for the runs of the places the actor's
// Scope admits (its channel grants, direct messages included, and its space grants; every
// run for an instance grant), so a reader's snapshot never reads runs it could not see; the
// per-run thread.read still decides.
func TestRunsInProgressPrefilter(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	inChannel := w.create(t, w.alex)
	inDM, err := w.runs.Create(w.as(w.helper), agents.RunInput{ThreadID: w.dmThread, RequestedBy: w.alex})
	if err != nil {
		t.Fatal(err)
	}
	grant := func(kind kernel.ResourceKind, id uuid.UUID) authz.Grant {
		return authz.Grant{PrincipalID: w.sam, ResourceKind: kind, ResourceID: id, Role: authz.RoleViewer}
	}
	for _, tc := range []struct {
		name   string
		grants []authz.Grant
		want   []uuid.UUID
	}{
		{"no grant", nil, nil},
		{"the channel", []authz.Grant{grant(kernel.ResourceChannel, w.channel)}, []uuid.UUID{inChannel.ID}},
		{"the space", []authz.Grant{grant(kernel.ResourceSpace, w.space)}, []uuid.UUID{inChannel.ID}},
		{"the direct message", []authz.Grant{grant(kernel.ResourceChannel, w.dm)}, []uuid.UUID{inDM.ID}},
		{"another space", []authz.Grant{grant(kernel.ResourceSpace, uuid.New())}, nil},
		{"the instance", []authz.Grant{grant(kernel.ResourceInstance, uuid.New())}, []uuid.UUID{inChannel.ID, inDM.ID}},
	} {
		w.authz.scope = authz.NewScope(w.sam, 1, tc.grants, map[uuid.UUID]uuid.UUID{w.channel: w.space, w.dm: uuid.Nil})
		w.authz.calls = nil
		got, err := w.runs.InProgress(w.as(w.sam))
		if err != nil {
			t.Fatalf("%s: InProgress: %v", tc.name, err)
		}
		ids := make([]uuid.UUID, len(got))
		for i, r := range got {
			ids[i] = r.ID
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%s: InProgress = %v, want %v", tc.name, ids, tc.want)
		}
		// Only the admitted runs are authorized: the rest never left the store.
		if n := len(w.authz.seen()); n != len(tc.want) {
			t.Errorf("%s: %d decisions, want one per admitted run (%d)", tc.name, n, len(tc.want))
		}
	}
}

var _ identity.Directory = fakeDirectory{}

// fakeRunInvocations is RunInvocations over a table of invocation ids and their threads: an
// invocation of the table in its thread is acknowledged, anything else refused as the real
// one refuses it.
type fakeRunInvocations map[uuid.UUID]uuid.UUID

func (f fakeRunInvocations) AckForRun(_ context.Context, id, threadID uuid.UUID) (agents.Invocation, error) {
	if th, ok := f[id]; !ok || th != threadID {
		return agents.Invocation{}, problem.Validation(problem.FieldError{Field: "invocation_id", Message: "must be an invocation of yours in this thread"})
	}
	return agents.Invocation{ID: id, ThreadID: threadID, State: agents.InvocationAcknowledged}, nil
}

// TestExpireStaleRuns: the sweep fails the queued and running runs nobody updated within
// agents.run_stale_after (ADR 0032), at most agents.run_expiry_batch per call and oldest
// first, each locked and stored with its run.updated by the system actor in the sweep's
// transaction; a run updated since, and a finished run, are left alone.
func TestExpireStaleRuns(t *testing.T) {
	t.Parallel()
	w := newRunsWorld(t)
	system := uuid.New()
	queued := w.create(t, w.alex)
	running := w.create(t, w.sam)
	if _, err := w.runs.Update(w.as(w.helper), running.ID, agents.RunChange{State: "running"}); err != nil {
		t.Fatal(err)
	}
	finished := w.create(t, w.alex)
	if _, err := w.runs.Cancel(w.as(w.alex), finished.ID); err != nil {
		t.Fatal(err)
	}
	third := w.create(t, w.alex)
	fresh := w.create(t, w.sam)
	w.clock.Advance(20 * time.Minute)
	if _, err := w.runs.Update(w.as(w.helper), fresh.ID, agents.RunChange{State: "running"}); err != nil {
		t.Fatal(err)
	}

	// Exactly agents.run_stale_after since the last update is not stale yet.
	w.clock.Advance(10 * time.Minute)
	before := len(w.log.events())
	if n, err := w.runs.Expire(context.Background(), system); err != nil || n != 0 {
		t.Fatalf("Expire before the key passed = %d, %v; want 0", n, err)
	}
	w.clock.Advance(time.Microsecond)
	now := w.clock.Now().UTC()
	var expired []uuid.UUID
	for _, want := range []int{2, 1, 0} {
		n, err := w.runs.Expire(context.Background(), system)
		if err != nil || n != want {
			t.Fatalf("Expire = %d, %v; want %d (agents.run_expiry_batch bounds a call)", n, err, want)
		}
	}
	events := w.log.events()[before:]
	for _, e := range events {
		var p struct {
			RunID    uuid.UUID `json:"run_id"`
			State    string    `json:"state"`
			Progress string    `json:"progress"`
		}
		b, _ := json.Marshal(e.Payload)
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if e.Type != app.RunUpdated || e.ActorID != system || p.State != "failed" || p.Progress != domain.ExpiredProgress {
			t.Fatalf("expiry event %s by %s: %s", e.Type, e.ActorID, b)
		}
		expired = append(expired, p.RunID)
	}
	if want := []uuid.UUID{queued.ID, running.ID, third.ID}; !slices.Equal(expired, want) {
		t.Fatalf("expired %v, want %v (oldest first)", expired, want)
	}
	for _, id := range expired {
		r, _ := w.store.Run(context.Background(), id)
		if r.State != domain.RunFailed || r.Progress != domain.ExpiredProgress || !r.EndedAt.Equal(now) || !r.UpdatedAt.Equal(now) {
			t.Fatalf("expired run %+v", r)
		}
	}
	for _, tc := range []struct {
		id   uuid.UUID
		want domain.RunState
	}{{fresh.ID, domain.RunRunning}, {finished.ID, domain.RunCancelled}} {
		if r, _ := w.store.Run(context.Background(), tc.id); r.State != tc.want {
			t.Fatalf("run %s is %s, want %s untouched", tc.id, r.State, tc.want)
		}
	}

	// A store that fails rolls the sweep back and says so.
	w.clock.Advance(time.Hour)
	w.store.staleErr = errBoom
	if n, err := w.runs.Expire(context.Background(), system); !errors.Is(err, errBoom) || n != 0 {
		t.Fatalf("Expire over a failing store = %d, %v", n, err)
	}
	if r, _ := w.store.Run(context.Background(), fresh.ID); r.State != domain.RunRunning {
		t.Fatalf("a failed sweep changed %+v", r)
	}
}
