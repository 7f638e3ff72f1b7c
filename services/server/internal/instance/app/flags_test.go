package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/instance"
	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
)

var errBoom = errors.New("boom")

type env struct {
	runner *tx.Runner
	store  *instancepg.Store
	flags  *app.Flags
	reader *syncpg.Reader
	info   instance.Info
}

// setup returns the flag use cases on a fresh database with the instance created.
func setup(t *testing.T) env {
	t.Helper()
	runner := tx.NewRunner(pgtest.New(t))
	store := instancepg.New(runner)
	info, err := store.Ensure(t.Context(), "bothy")
	if err != nil {
		t.Fatalf("ensure instance: %v", err)
	}
	return env{
		runner: runner,
		store:  store,
		flags:  app.NewFlags(runner, store, newAppender(t, runner, store)),
		reader: syncpg.NewReader(runner),
		info:   info,
	}
}

// newAppender returns the event log's appender on runner.
func newAppender(t *testing.T, runner *tx.Runner, store *instancepg.Store) kernel.Appender {
	t.Helper()
	a, err := syncpg.NewAppender(runner, store, syncpg.AppendConfig{Concurrency: 4})
	if err != nil {
		t.Fatalf("appender: %v", err)
	}
	return a
}

// events returns every event of the log.
func (e env) events(t *testing.T) []domain.StoredEvent {
	t.Helper()
	evs, err := e.reader.EventsAfter(t.Context(), 0, 1000)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// define defines a flag or fails the test.
func (e env) define(t *testing.T, key string, defaultEnabled bool) {
	t.Helper()
	if _, err := e.flags.Define(t.Context(), key, "", defaultEnabled); err != nil {
		t.Fatalf("define %s: %v", key, err)
	}
}

// override sets an override or fails the test.
func (e env) override(t *testing.T, key string, target instance.FlagTarget, enabled bool) {
	t.Helper()
	if _, err := e.flags.SetOverride(t.Context(), key, target, enabled); err != nil {
		t.Fatalf("override %s for %s: %v", key, target, err)
	}
}

func ptr(b bool) *bool { return &b }

func TestEvaluatePrecedence(t *testing.T) {
	t.Parallel()
	e := setup(t)
	alex := actor.Actor{PrincipalID: ids.New(), Kind: actor.KindPerson}
	robin := actor.Actor{PrincipalID: ids.New(), Kind: actor.KindAgent}
	tests := []struct {
		name           string
		defaultEnabled bool
		kind           *bool // override for Alex's kind (person)
		otherKind      *bool // override for another kind (agent), which must not apply
		principal      *bool // override for Alex
		otherPrincipal *bool // override for Robin, which must not apply
		want           bool
	}{
		{name: "default off", want: false},
		{name: "default on", defaultEnabled: true, want: true},
		{name: "kind on over default off", kind: ptr(true), want: true},
		{name: "kind off over default on", defaultEnabled: true, kind: ptr(false), want: false},
		{name: "principal on over default off", principal: ptr(true), want: true},
		{name: "principal off over default on", defaultEnabled: true, principal: ptr(false), want: false},
		{name: "principal on over kind off", kind: ptr(false), principal: ptr(true), want: true},
		{name: "principal off over kind on", defaultEnabled: true, kind: ptr(true), principal: ptr(false), want: false},
		{name: "another kind does not apply", otherKind: ptr(true), want: false},
		{name: "another principal does not apply", defaultEnabled: true, otherPrincipal: ptr(false), want: true},
		{name: "everything set, principal wins", kind: ptr(false), otherKind: ptr(false), principal: ptr(true), otherPrincipal: ptr(false), want: true},
	}
	keys := make([]string, len(tests))
	for i, tc := range tests {
		keys[i] = "case-" + string(rune('a'+i))
		e.define(t, keys[i], tc.defaultEnabled)
		for _, o := range []struct {
			v      *bool
			target instance.FlagTarget
		}{
			{tc.kind, instance.KindTarget(actor.KindPerson)},
			{tc.otherKind, instance.KindTarget(actor.KindAgent)},
			{tc.principal, instance.PrincipalTarget(alex.PrincipalID)},
			{tc.otherPrincipal, instance.PrincipalTarget(robin.PrincipalID)},
		} {
			if o.v != nil {
				e.override(t, keys[i], o.target, *o.v)
			}
		}
	}
	got, err := e.flags.Evaluate(t.Context(), alex)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if len(got) != len(tests) {
		t.Fatalf("Evaluate returned %d flags, want %d: %+v", len(got), len(tests), got)
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got[i].Key != keys[i] || got[i].Enabled != tc.want {
				t.Fatalf("flag %d = %+v, want {%s %v}", i, got[i], keys[i], tc.want)
			}
		})
	}
}

func TestEvaluateWithoutFlagsIsEmpty(t *testing.T) {
	t.Parallel()
	e := setup(t)
	got, err := e.flags.Evaluate(t.Context(), actor.Actor{PrincipalID: ids.New(), Kind: actor.KindApp})
	if err != nil || len(got) != 0 || got == nil {
		t.Fatalf("Evaluate = %#v, %v; want an empty, non-nil list", got, err)
	}
}

func TestEvaluateJoinsTheCallersTransaction(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sam := actor.Actor{PrincipalID: ids.New(), Kind: actor.KindPerson}
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if _, err := e.flags.Define(ctx, "drafts.sync", "", true); err != nil {
			return err
		}
		got, err := e.flags.Evaluate(ctx, sam)
		if err != nil {
			return err
		}
		if len(got) != 1 || !got[0].Enabled {
			t.Errorf("Evaluate inside the transaction = %+v, want drafts.sync on", got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
}

// change is one flag administration call; the setup runs before it, unrecorded.
type change struct {
	name    string
	setup   func(t *testing.T, e env)
	run     func(ctx context.Context, f *app.Flags) error
	appends bool // whether it changes something and so appends flags.updated
}

var samID = uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77")

func changes() []change {
	defined := func(t *testing.T, e env) { e.define(t, "threads.summaries", false) }
	overridden := func(t *testing.T, e env) {
		defined(t, e)
		e.override(t, "threads.summaries", instance.KindTarget(actor.KindAgent), true)
		e.override(t, "threads.summaries", instance.PrincipalTarget(samID), false)
	}
	define := func(desc string, on bool) func(ctx context.Context, f *app.Flags) error {
		return func(ctx context.Context, f *app.Flags) error {
			_, err := f.Define(ctx, "threads.summaries", desc, on)
			return err
		}
	}
	set := func(target instance.FlagTarget, on bool) func(ctx context.Context, f *app.Flags) error {
		return func(ctx context.Context, f *app.Flags) error {
			_, err := f.SetOverride(ctx, "threads.summaries", target, on)
			return err
		}
	}
	unset := func(target instance.FlagTarget) func(ctx context.Context, f *app.Flags) error {
		return func(ctx context.Context, f *app.Flags) error {
			_, err := f.ClearOverride(ctx, "threads.summaries", target)
			return err
		}
	}
	agents := instance.KindTarget(actor.KindAgent)
	sam := instance.PrincipalTarget(samID)
	return []change{
		{name: "define a new flag", run: define("", false), appends: true},
		{name: "change the default", setup: defined, run: define("", true), appends: true},
		{name: "change the description", setup: defined, run: define("Summaries of long threads.", false), appends: true},
		{name: "repeat the definition", setup: defined, run: define("", false)},
		{name: "set a kind override", setup: defined, run: set(agents, true), appends: true},
		{name: "set a principal override", setup: defined, run: set(sam, true), appends: true},
		{name: "change a kind override", setup: overridden, run: set(agents, false), appends: true},
		{name: "change a principal override", setup: overridden, run: set(sam, true), appends: true},
		{name: "repeat a kind override", setup: overridden, run: set(agents, true)},
		{name: "repeat a principal override", setup: overridden, run: set(sam, false)},
		{name: "clear a kind override", setup: overridden, run: unset(agents), appends: true},
		{name: "clear a principal override", setup: overridden, run: unset(sam), appends: true},
		{name: "clear an absent override", setup: defined, run: unset(agents)},
		{name: "delete a flag", setup: overridden, run: func(ctx context.Context, f *app.Flags) error {
			return f.Delete(ctx, "threads.summaries")
		}, appends: true},
	}
}

func TestFlagChangesAppendExactlyFlagsUpdated(t *testing.T) {
	t.Parallel()
	for _, c := range changes() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			if c.setup != nil {
				c.setup(t, e)
			}
			before := e.events(t)
			alex := ids.New()
			ctx := actor.With(t.Context(), actor.Actor{PrincipalID: alex, Kind: actor.KindPerson})
			if err := c.run(ctx, e.flags); err != nil {
				t.Fatalf("change: %v", err)
			}
			added := e.events(t)[len(before):]
			if !c.appends {
				if len(added) != 0 {
					t.Fatalf("a change that changes nothing appended %d events: %+v", len(added), added)
				}
				return
			}
			if len(added) != 1 {
				t.Fatalf("appended %d events, want exactly one: %+v", len(added), added)
			}
			checkFlagsUpdated(t, added[0], e.info.ID, alex, "threads.summaries")
		})
	}
}

func TestFlagChangesAppendNothingOnRollback(t *testing.T) {
	t.Parallel()
	for _, c := range changes() {
		if !c.appends {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			if c.setup != nil {
				c.setup(t, e)
			}
			flagsBefore, err := e.flags.List(t.Context())
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			before := e.events(t)
			err = e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
				if err := c.run(ctx, e.flags); err != nil {
					return err
				}
				return errBoom
			})
			if !errors.Is(err, errBoom) {
				t.Fatalf("RunInTx = %v, want the caller's error", err)
			}
			if after := e.events(t); len(after) != len(before) {
				t.Fatalf("a rolled-back change left %d events", len(after)-len(before))
			}
			flagsAfter, err := e.flags.List(t.Context())
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if !equalFlags(flagsBefore, flagsAfter) {
				t.Fatalf("a rolled-back change changed the flags:\nbefore %+v\nafter  %+v", flagsBefore, flagsAfter)
			}
		})
	}
}

func TestFlagChangeWithoutActorActsAsTheInstance(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.define(t, "threads.summaries", true)
	evs := e.events(t)
	if len(evs) != 1 {
		t.Fatalf("events = %+v, want one", evs)
	}
	checkFlagsUpdated(t, evs[0], e.info.ID, e.info.ID, "threads.summaries")
}

func TestFlagAdminReadsBack(t *testing.T) {
	t.Parallel()
	e := setup(t)
	robin, sam := ids.New(), samID
	if robin.String() < sam.String() {
		robin, sam = sam, robin
	}
	flag, err := e.flags.Define(t.Context(), "threads.summaries", "Summaries of long threads.", false)
	if err != nil {
		t.Fatalf("Define: %v", err)
	}
	if flag.Key != "threads.summaries" || flag.Description != "Summaries of long threads." || flag.DefaultEnabled ||
		flag.Version != 1 || flag.CreatedAt.IsZero() || flag.CreatedAt.Location().String() != "UTC" || len(flag.Overrides) != 0 || flag.Overrides == nil {
		t.Fatalf("Define returned %+v", flag)
	}
	// Overrides in the documented order, whatever the order they were set in.
	for _, o := range []instance.FlagOverride{
		{Target: instance.PrincipalTarget(robin), Enabled: true},
		{Target: instance.KindTarget(actor.KindApp), Enabled: false},
		{Target: instance.PrincipalTarget(sam), Enabled: false},
		{Target: instance.KindTarget(actor.KindPerson), Enabled: true},
		{Target: instance.KindTarget(actor.KindAgent), Enabled: true},
	} {
		e.override(t, "threads.summaries", o.Target, o.Enabled)
	}
	e.define(t, "agents.presence", true)
	want := []instance.FlagOverride{
		{Target: instance.KindTarget(actor.KindPerson), Enabled: true},
		{Target: instance.KindTarget(actor.KindAgent), Enabled: true},
		{Target: instance.KindTarget(actor.KindApp), Enabled: false},
		{Target: instance.PrincipalTarget(sam), Enabled: false},
		{Target: instance.PrincipalTarget(robin), Enabled: true},
	}
	flags, err := e.flags.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(flags) != 2 || flags[0].Key != "agents.presence" || flags[1].Key != "threads.summaries" {
		t.Fatalf("List = %+v, want agents.presence, threads.summaries", flags)
	}
	if len(flags[0].Overrides) != 0 || flags[0].Overrides == nil {
		t.Fatalf("agents.presence overrides = %#v, want an empty list", flags[0].Overrides)
	}
	if !slices.Equal(flags[1].Overrides, want) {
		t.Fatalf("overrides = %+v, want %+v", flags[1].Overrides, want)
	}
	if flags[1].Version != 6 || flags[1].UpdatedAt.Before(flags[1].CreatedAt) {
		t.Fatalf("version %d (want 6, one per change), created %v, updated %v", flags[1].Version, flags[1].CreatedAt, flags[1].UpdatedAt)
	}
	cleared, err := e.flags.ClearOverride(t.Context(), "threads.summaries", instance.KindTarget(actor.KindApp))
	if err != nil {
		t.Fatalf("ClearOverride: %v", err)
	}
	if cleared.Version != 7 || len(cleared.Overrides) != 4 {
		t.Fatalf("after clearing: %+v", cleared)
	}
	if err := e.flags.Delete(t.Context(), "threads.summaries"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	got, err := e.flags.Evaluate(t.Context(), actor.Actor{PrincipalID: sam, Kind: actor.KindPerson})
	if err != nil || len(got) != 1 || got[0] != (instance.EvaluatedFlag{Key: "agents.presence", Enabled: true}) {
		t.Fatalf("Evaluate after delete = %+v, %v", got, err)
	}
}

func TestFlagAdminErrors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.define(t, "threads.summaries", false)
	agents := instance.KindTarget(actor.KindAgent)
	tests := []struct {
		name       string
		run        func(ctx context.Context) error
		wantKind   error
		wantFields []string
	}{
		{name: "override of an unknown flag", wantKind: instance.ErrFlagNotFound, run: func(ctx context.Context) error {
			_, err := e.flags.SetOverride(ctx, "threads.missing", agents, true)
			return err
		}},
		{name: "clear on an unknown flag", wantKind: instance.ErrFlagNotFound, run: func(ctx context.Context) error {
			_, err := e.flags.ClearOverride(ctx, "threads.missing", agents)
			return err
		}},
		{name: "delete an unknown flag", wantKind: instance.ErrFlagNotFound, run: func(ctx context.Context) error {
			return e.flags.Delete(ctx, "threads.missing")
		}},
		{name: "define with a bad key and description", wantKind: problem.ErrValidation, wantFields: []string{"key", "description"}, run: func(ctx context.Context) error {
			_, err := e.flags.Define(ctx, "Threads", string(make([]byte, 501)), true)
			return err
		}},
		{name: "override with a bad key and target", wantKind: problem.ErrValidation, wantFields: []string{"key", "target"}, run: func(ctx context.Context) error {
			_, err := e.flags.SetOverride(ctx, "", instance.FlagTarget{}, true)
			return err
		}},
		{name: "override for an unknown kind", wantKind: problem.ErrValidation, wantFields: []string{"target"}, run: func(ctx context.Context) error {
			_, err := e.flags.SetOverride(ctx, "threads.summaries", instance.KindTarget("robot"), true)
			return err
		}},
		{name: "clear with both kind and principal", wantKind: problem.ErrValidation, wantFields: []string{"target"}, run: func(ctx context.Context) error {
			_, err := e.flags.ClearOverride(ctx, "threads.summaries", instance.FlagTarget{Kind: actor.KindApp, PrincipalID: samID})
			return err
		}},
		{name: "delete with a bad key", wantKind: problem.ErrValidation, wantFields: []string{"key"}, run: func(ctx context.Context) error {
			return e.flags.Delete(ctx, "no spaces")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.run(t.Context())
			if !errors.Is(err, tc.wantKind) {
				t.Fatalf("error = %v, want %v", err, tc.wantKind)
			}
			p := problem.From(t.Context(), err)
			var fields []string
			for _, f := range p.Errors {
				fields = append(fields, f.Field)
			}
			if !slices.Equal(fields, tc.wantFields) {
				t.Fatalf("fields = %v, want %v", fields, tc.wantFields)
			}
		})
	}
}

func TestFlagChangeWithoutInstanceFails(t *testing.T) {
	t.Parallel()
	runner := tx.NewRunner(pgtest.New(t))
	store := instancepg.New(runner)
	flags := app.NewFlags(runner, store, newAppender(t, runner, store))
	if _, err := flags.Define(t.Context(), "threads.summaries", "", true); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("Define without an instance = %v, want ErrNoInstance", err)
	}
	list, err := flags.List(t.Context())
	if err != nil || len(list) != 0 {
		t.Fatalf("the failed definition left flags: %+v, %v", list, err)
	}
}

// checkFlagsUpdated asserts that ev is flags.updated for key on the instance, by actorID.
func checkFlagsUpdated(t *testing.T, ev domain.StoredEvent, instanceID, actorID uuid.UUID, key string) {
	t.Helper()
	if ev.Type != app.FlagsUpdated || ev.ResourceKind != kernel.ResourceInstance || ev.ResourceID != instanceID ||
		ev.ActorID != actorID || ev.ReceiveAction != kernel.ActionInstanceRead || ev.AudienceID != uuid.Nil {
		t.Fatalf("event = %+v, want flags.updated on instance %s by %s", ev, instanceID, actorID)
	}
	var payload struct {
		Keys []string `json:"keys"`
	}
	if err := json.Unmarshal(ev.Payload, &payload); err != nil || !slices.Equal(payload.Keys, []string{key}) {
		t.Fatalf("payload = %s (%v), want keys [%s]", ev.Payload, err, key)
	}
}

func equalFlags(a, b []instance.Flag) bool {
	return slices.EqualFunc(a, b, func(x, y instance.Flag) bool {
		return x.Key == y.Key && x.Description == y.Description && x.DefaultEnabled == y.DefaultEnabled &&
			x.Version == y.Version && slices.Equal(x.Overrides, y.Overrides)
	})
}
