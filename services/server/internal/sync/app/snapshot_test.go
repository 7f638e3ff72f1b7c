package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/conditional"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

var _ syncmod.Snapshot = (*app.Snapshot)(nil)

// build builds the snapshot of the person principalID in w.
func build(t *testing.T, w *snapWorld, principalID uuid.UUID, kind actor.Kind) syncmod.SnapshotView {
	t.Helper()
	v, err := newSnapshot(t, w).Build(snapAs(t.Context(), principalID, kind))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return v
}

func channelIDs(views []chat.ChannelView) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(views))
	for _, v := range views {
		out = append(out, v.Channel.ID)
	}
	return out
}

func sameSet(a, b []uuid.UUID) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	cmp := func(p, q uuid.UUID) int { return strings.Compare(p.String(), q.String()) }
	slices.SortFunc(x, cmp)
	slices.SortFunc(y, cmp)
	return slices.Equal(x, y)
}

// TestSnapshotContents checks every part of Alex's snapshot in the fixed world against what
// spec 03 says it holds, the filtering of what Alex cannot read included.
func TestSnapshotContents(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	v := build(t, w, snapAlex, actor.KindPerson)

	t.Run("versions", func(t *testing.T) {
		if v.HeadSeq != 1300 || v.SyncEpoch != snapEpoch || v.PermissionVersion != 12 || v.IsOwner {
			t.Fatalf("head %d epoch %s permission version %d owner %v, want 1300 %s 12 false",
				v.HeadSeq, v.SyncEpoch, v.PermissionVersion, v.IsOwner, snapEpoch)
		}
	})
	t.Run("principal and instance", func(t *testing.T) {
		if v.Principal != w.refs[snapAlex] {
			t.Fatalf("principal %+v, want %+v", v.Principal, w.refs[snapAlex])
		}
		if v.Instance != w.info {
			t.Fatalf("instance %+v, want %+v", v.Instance, w.info)
		}
	})
	t.Run("spaces", func(t *testing.T) {
		var got []uuid.UUID
		for _, s := range v.Spaces {
			got = append(got, s.Space.ID)
		}
		// Marketing through the grant on launch, Support through the space grant; the archived
		// space is left out.
		if want := []uuid.UUID{snapMarketing, snapSupport}; !slices.Equal(got, want) {
			t.Fatalf("spaces %v, want %v", got, want)
		}
	})
	t.Run("channels", func(t *testing.T) {
		want := []uuid.UUID{snapDMAlexSam, snapBilling, snapLaunch, snapTickets}
		if got := channelIDs(v.Channels); !slices.Equal(got, want) {
			t.Fatalf("channels %v, want %v", got, want)
		}
		if v.Channels[0].Level == "" || len(v.Channels[0].Capabilities) == 0 {
			t.Fatalf("channel view lost its level or capabilities: %+v", v.Channels[0])
		}
	})
	t.Run("sidebar drops channels Alex cannot read", func(t *testing.T) {
		want := syncmod.Sidebar{PrincipalID: snapAlex, Version: 5, Sections: []syncmod.SidebarSection{
			{Key: "favourites", Title: "Favourites", ChannelIDs: []uuid.UUID{snapTickets, snapLaunch}},
			{Key: "people", Title: "People", Collapsed: true, ChannelIDs: []uuid.UUID{snapDMAlexSam}},
			{Key: "gone", Title: "Gone", ChannelIDs: []uuid.UUID{}},
			{Key: "empty", Title: "", ChannelIDs: []uuid.UUID{}},
		}}
		if !reflect.DeepEqual(v.Sidebar, want) {
			t.Fatalf("sidebar\n got %+v\nwant %+v", v.Sidebar, want)
		}
	})
	t.Run("unread threads", func(t *testing.T) {
		want := []syncmod.UnreadThread{
			{ThreadID: snapT1, ChannelID: snapTickets, SpaceID: snapSupport, LastMessageSeq: 7, LastReadSeq: 4, UnreadCount: 3, MentionCount: 1},
			{ThreadID: snapT3, ChannelID: snapTickets, SpaceID: snapSupport, LastMessageSeq: 5, LastReadSeq: 5, UnreadCount: 0, MentionCount: 1},
			{ThreadID: snapT4, ChannelID: snapTickets, SpaceID: snapSupport, LastMessageSeq: 9, LastReadSeq: 2, UnreadCount: 3, MentionCount: 0},
			{ThreadID: snapB1, ChannelID: snapBilling, SpaceID: snapSupport, LastMessageSeq: 4, LastReadSeq: 0, UnreadCount: 3, MentionCount: 0},
			{ThreadID: snapD1, ChannelID: snapDMAlexSam, LastMessageSeq: 2, LastReadSeq: 0, UnreadCount: 2, MentionCount: 0},
		}
		if !reflect.DeepEqual(v.UnreadThreads, want) {
			t.Fatalf("unread threads\n got %+v\nwant %+v", v.UnreadThreads, want)
		}
	})
	t.Run("counters are asked only about visible channels", func(t *testing.T) {
		visible := channelIDs(v.Channels)
		if len(w.counterArgs) != 1 || !sameSet(w.counterArgs[0], visible) {
			t.Fatalf("Counters asked about %v, want once about %v", w.counterArgs, visible)
		}
		want := map[uuid.UUID]int64{snapT1: 4, snapT3: 5, snapT4: 2, snapL1: 2}
		if len(w.readSeqArgs) != 1 || !reflect.DeepEqual(w.readSeqArgs[0], want) {
			t.Fatalf("CountUnread got read positions %v, want once %v (none of a channel Alex cannot read)", w.readSeqArgs, want)
		}
	})
	t.Run("every listed thread is authorized in filter mode", func(t *testing.T) {
		var got []uuid.UUID
		for _, d := range w.decisions {
			if d.action != kernel.ActionThreadRead {
				continue
			}
			if !d.filter {
				t.Errorf("thread.read on %s decided outside filter mode", d.res.ID)
			}
			c, _ := w.channel(d.res.ChannelID)
			want := authorize.Resource{Kind: kernel.ResourceThread, ID: d.res.ID, SpaceID: c.SpaceID, ChannelID: c.ID, ThreadID: d.res.ID}
			if d.res != want {
				t.Errorf("thread.read on %+v, want the whole resource %+v", d.res, want)
			}
			got = append(got, d.res.ID)
		}
		// L1 is read (not asked); H1 is asked and denied.
		if want := []uuid.UUID{snapT1, snapT3, snapT4, snapB1, snapH1, snapD1}; !sameSet(got, want) {
			t.Fatalf("thread.read asked on %v, want %v", got, want)
		}
	})
	t.Run("drafts are refs in visible channels", func(t *testing.T) {
		want := []syncmod.DraftRef{
			{ChannelID: snapTickets, Version: 2},
			{ChannelID: snapTickets, ThreadID: snapT1, Version: 1},
			{ChannelID: snapDMAlexSam, ThreadID: snapD1, Version: 3},
		}
		if !reflect.DeepEqual(v.Drafts, want) {
			t.Fatalf("drafts\n got %+v\nwant %+v", v.Drafts, want)
		}
	})
	t.Run("settings", func(t *testing.T) {
		if !reflect.DeepEqual(v.Settings, w.settings[snapAlex]) {
			t.Fatalf("settings %+v, want %+v", v.Settings, w.settings[snapAlex])
		}
	})
	t.Run("agents are unknown", func(t *testing.T) {
		want := []syncmod.AgentPresence{{
			Agent: identity.PrincipalRef{ID: snapHelper, Kind: actor.KindAgent, DisplayName: "Helper", Handle: "helper"},
			State: syncmod.AgentStateUnknown,
		}}
		if !reflect.DeepEqual(v.Agents, want) {
			t.Fatalf("agents %+v, want %+v", v.Agents, want)
		}
	})
	t.Run("active runs and features", func(t *testing.T) {
		if v.ActiveRuns == nil || len(v.ActiveRuns) != 0 {
			t.Fatalf("active runs %#v, want []", v.ActiveRuns)
		}
		if !reflect.DeepEqual(v.Features, w.flags) {
			t.Fatalf("features %+v, want %+v", v.Features, w.flags)
		}
	})
	t.Run("body and etag", func(t *testing.T) {
		want, err := snapJSON(v)
		if err != nil || !bytes.Equal(v.Body, want) {
			t.Fatalf("Body is not the encoder's output of the view (%v)", err)
		}
		if tag := conditional.Tag(v.Body); tag != v.ETag {
			t.Fatalf("Tag(Body) = %q; the view carries %q", tag, v.ETag)
		}
	})
}

// TestSnapshotPassesRunsThrough: the runs source decides which runs the actor sees; the
// snapshot reports them as given.
func TestSnapshotPassesRunsThrough(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	run := syncmod.RunSummary{ID: uuid.New(), AgentID: snapHelper, ThreadID: snapT1, State: "running", CreatedAt: snapCreated, UpdatedAt: snapCreated, Version: 1}
	w.runs = []syncmod.RunSummary{run}
	v := build(t, w, snapAlex, actor.KindPerson)
	if !reflect.DeepEqual(v.ActiveRuns, w.runs) {
		t.Fatalf("active runs %+v, want %+v", v.ActiveRuns, w.runs)
	}
}

// leakyCounters answers about every thread, whatever channels it was asked about.
type leakyCounters struct{ *snapWorld }

func (l leakyCounters) Counters(context.Context, []uuid.UUID) ([]chat.ThreadCounter, error) {
	return slices.Clone(l.threads), nil
}

// TestSnapshotDropsCountersOfInvisibleChannels: a counter of a channel the actor cannot read
// never reaches the snapshot, even from a source that answers more than it was asked.
func TestSnapshotDropsCountersOfInvisibleChannels(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	deps := snapDeps(w)
	deps.Threads = leakyCounters{w}
	s, err := app.NewSnapshot(deps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
	if err != nil {
		t.Fatal(err)
	}
	want := build(t, newSnapWorld(), snapAlex, actor.KindPerson)
	if !reflect.DeepEqual(v.UnreadThreads, want.UnreadThreads) {
		t.Fatalf("unread threads %+v, want %+v", v.UnreadThreads, want.UnreadThreads)
	}
}

// TestSnapshotAppWithoutMessagesRead: an app whose scopes do not cover space.read is denied
// chat's space listing; it still gets its snapshot, without spaces.
func TestSnapshotAppWithoutMessagesRead(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	w.fail["Spaces.List"] = problem.ErrNotFound
	v := build(t, w, snapBot, actor.KindApp)
	if v.Spaces == nil || len(v.Spaces) != 0 {
		t.Fatalf("spaces %#v, want []", v.Spaces)
	}
}

// TestSnapshotOwner reports is_owner from the Scope.
func TestSnapshotOwner(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	w.grants[snapRobin] = snapGrants{instance: "owner"}
	v := build(t, w, snapRobin, actor.KindPerson)
	if !v.IsOwner {
		t.Fatal("is_owner false for the owner")
	}
	// The owner reads every channel that is not archived, direct messages of others aside.
	want := []uuid.UUID{snapDMSamRobin, snapBilling, snapLaunch, snapSecret, snapTickets}
	if got := channelIDs(v.Channels); !slices.Equal(got, want) {
		t.Fatalf("channels %v, want %v", got, want)
	}
}

// TestSnapshotHeadReadFirst: the head and the epoch are read before every part of the
// snapshot, so every change up to the head is contained. Only the gate (sync.snapshot.read,
// which also gives the coalescing key) comes before them.
func TestSnapshotHeadReadFirst(t *testing.T) {
	t.Parallel()
	for _, kind := range []actor.Kind{actor.KindPerson, actor.KindAgent, actor.KindApp} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			build(t, w, snapAlex, kind)
			calls := w.callLog()
			if want := []string{"ForActor", "EventSeq", "SyncEpoch", "ForActor"}; len(calls) < 4 || !slices.Equal(calls[:4], want) {
				t.Fatalf("calls begin %v, want %v", calls, want)
			}
			if w.count("EventSeq") != 1 || w.count("SyncEpoch") != 1 {
				t.Fatalf("calls %v: want the head and the epoch read once", calls)
			}
			if len(w.decisions) == 0 || w.decisions[0].action != kernel.ActionSyncSnapshotRead || w.decisions[0].res != authorize.Instance() || w.decisions[0].filter {
				t.Fatalf("first decision %+v, want sync.snapshot.read on the instance, audited", w.decisions)
			}
		})
	}
}

// TestSnapshotStateInOneRead: with a State (wire's one round trip), the head, the epoch and
// the permission version are read first, before the gate and every part, and the gate's Scope,
// the one at the permission version read after the head, filters the build: the version a
// grant change before the head moved it to, and not one a change after the head moved it to.
// The Scope is taken once.
func TestSnapshotStateInOneRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		state  func(*snapWorld) snapState
		wantPV int64
	}{
		{"permission version unchanged", func(w *snapWorld) snapState { return snapState{w: w} }, 12},
		{"moved just before the head", func(w *snapWorld) snapState { return snapState{w: w, bump: true} }, 13},
		{"moved after the head", func(w *snapWorld) snapState { return snapState{w: w, later: 20} }, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			deps := snapDeps(w)
			deps.State = tc.state(w)
			s, err := app.NewSnapshot(deps)
			if err != nil {
				t.Fatalf("NewSnapshot: %v", err)
			}
			v, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			calls := w.callLog()
			if want := []string{"SnapshotState", "ForActor"}; len(calls) <= len(want) || !slices.Equal(calls[:len(want)], want) {
				t.Fatalf("calls begin %v, want %v and then the parts", calls, want)
			}
			if n := w.count("ForActor"); n != 1 {
				t.Errorf("ForActor called %d times, want once (the gate's Scope filters the build)", n)
			}
			if len(w.decisions) == 0 || w.decisions[0].action != kernel.ActionSyncSnapshotRead {
				t.Errorf("first decision %+v, want the gate's sync.snapshot.read", w.decisions)
			}
			if w.count("EventSeq") != 0 || w.count("SyncEpoch") != 0 {
				t.Errorf("calls %v: the head and the epoch were read apart too", calls)
			}
			if v.HeadSeq != 1300 || v.SyncEpoch != snapEpoch || v.PermissionVersion != tc.wantPV {
				t.Errorf("head %d, epoch %s, permission version %d; want 1300, %s, %d", v.HeadSeq, v.SyncEpoch, v.PermissionVersion, snapEpoch, tc.wantPV)
			}
		})
	}
}

// TestSnapshotAgentHasEmptyPersonalParts: agents and apps have no sidebar, unread threads,
// settings or drafts, and their personal data and counters are not even read.
func TestSnapshotAgentHasEmptyPersonalParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		who  uuid.UUID
		kind actor.Kind
	}{{snapHelper, actor.KindAgent}, {snapBot, actor.KindApp}} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			// Give them personal data anyway: it must not show.
			w.readStates[tc.who] = w.readStates[snapAlex]
			w.settings[tc.who] = w.settings[snapAlex]
			w.drafts[tc.who] = w.drafts[snapAlex]
			w.sidebars[tc.who] = w.sidebars[snapAlex]
			v := build(t, w, tc.who, tc.kind)
			want := syncmod.Sidebar{PrincipalID: tc.who, Sections: []syncmod.SidebarSection{}}
			if !reflect.DeepEqual(v.Sidebar, want) {
				t.Errorf("sidebar %+v, want %+v", v.Sidebar, want)
			}
			if v.UnreadThreads == nil || len(v.UnreadThreads) != 0 || v.Settings == nil || len(v.Settings) != 0 ||
				v.Drafts == nil || len(v.Drafts) != 0 {
				t.Errorf("unread %#v settings %#v drafts %#v, want all []", v.UnreadThreads, v.Settings, v.Drafts)
			}
			for _, c := range []string{"PersonalData", "Counters", "CountUnread"} {
				if n := w.count(c); n != 0 {
					t.Errorf("%s called %d times for a principal without personal parts", c, n)
				}
			}
			if len(v.Channels) == 0 || len(v.Agents) == 0 || len(v.Features) == 0 || v.Principal.ID != tc.who {
				t.Errorf("the shared parts are missing: channels %v agents %v features %v principal %v",
					v.Channels, v.Agents, v.Features, v.Principal)
			}
		})
	}
}

// TestSnapshotHasNoContent: no draft text and no content member anywhere in a snapshot.
func TestSnapshotHasNoContent(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	v := build(t, w, snapAlex, actor.KindPerson)
	if len(v.Drafts) == 0 {
		t.Fatal("the world has no visible draft; the test would prove nothing")
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode the view: %v", err)
	}
	for _, bad := range []string{snapDraftText, "ContentMD", "content_md", "Lunch"} {
		if strings.Contains(string(b), bad) {
			t.Fatalf("the snapshot contains %q:\n%s", bad, b)
		}
	}
	if n := reflect.TypeFor[syncmod.DraftRef]().NumField(); n != 3 {
		t.Fatalf("DraftRef has %d fields; a draft's text must never be one of them", n)
	}
}

// nilSources answer nil slices, as a careless adapter might; the snapshot still has no nil.
type nilSources struct{ *snapWorld }

func (nilSources) ListVisible(context.Context) ([]chat.ChannelView, error) { return nil, nil }
func (nilSources) List(context.Context) ([]chat.SpaceView, error)          { return nil, nil }
func (nilSources) ActiveRuns(context.Context) ([]syncmod.RunSummary, error) {
	return nil, nil
}

func (nilSources) Evaluate(context.Context, actor.Actor) ([]instance.EvaluatedFlag, error) {
	return nil, nil
}
func (nilSources) PersonalData(_ context.Context, id uuid.UUID) (app.PersonalData, error) {
	return app.PersonalData{Sidebar: syncmod.Sidebar{PrincipalID: id, Sections: []syncmod.SidebarSection{{Key: "a"}}}}, nil
}

type nilAgents struct{}

func (nilAgents) List(context.Context) ([]agents.Agent, error) { return nil, nil }

func TestSnapshotHasNoNilSlices(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	n := nilSources{w}
	deps := snapDeps(w)
	deps.Channels, deps.Spaces, deps.Runs, deps.Flags, deps.Personal, deps.Agents = n, n, n, n, n, nilAgents{}
	s, err := app.NewSnapshot(deps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") {
		t.Fatalf("the view has a nil slice: %s", b)
	}
}

// TestSnapshotGate: Build authorizes sync.snapshot.read itself and reads nothing else when it
// is refused.
func TestSnapshotGate(t *testing.T) {
	t.Parallel()
	t.Run("no actor", func(t *testing.T) {
		t.Parallel()
		w := newSnapWorld()
		_, err := newSnapshot(t, w).Build(t.Context())
		if !errors.Is(err, problem.ErrUnauthenticated) {
			t.Fatalf("Build without an actor = %v, want unauthenticated", err)
		}
		if len(w.callLog()) != 0 {
			t.Fatalf("calls %v without an actor", w.callLog())
		}
	})
	for _, refusal := range []error{problem.ErrDevicePending, problem.ErrForbidden, problem.ErrNotFound} {
		t.Run(refusal.Error(), func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			w.gateErr = refusal
			_, err := newSnapshot(t, w).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if !errors.Is(err, refusal) {
				t.Fatalf("Build = %v, want %v", err, refusal)
			}
			if calls := w.callLog(); !slices.Equal(calls, []string{"ForActor"}) {
				t.Fatalf("calls %v after a refusal, want only the gate", calls)
			}
		})
	}
}

// TestSnapshotSourceErrors: a failing source fails the build with its error.
func TestSnapshotSourceErrors(t *testing.T) {
	t.Parallel()
	for _, call := range []string{
		"EventSeq", "SyncEpoch", "Ref", "Info", "Spaces.List", "ListVisible", "PersonalData", "Counters",
		"CountUnread", "ActiveRuns", "Agents.List", "Evaluate",
	} {
		t.Run(call, func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			boom := errors.New(call + " is down")
			w.fail[call] = boom
			_, err := newSnapshot(t, w).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if !errors.Is(err, boom) {
				t.Fatalf("Build = %v, want it to wrap %v", err, boom)
			}
		})
	}
	t.Run("the second ForActor", func(t *testing.T) {
		t.Parallel()
		w := newSnapWorld()
		d := &secondFails{snapWorld: w, err: errors.New("permission data unreadable")}
		deps := snapDeps(w)
		deps.Authorizer = d
		s, err := app.NewSnapshot(deps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); !errors.Is(err, d.err) {
			t.Fatalf("Build = %v, want it to wrap %v", err, d.err)
		}
	})
	t.Run("the gate's ForActor", func(t *testing.T) {
		t.Parallel()
		w := newSnapWorld()
		w.fail["ForActor"] = errDown
		if _, err := newSnapshot(t, w).Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); !errors.Is(err, errDown) {
			t.Fatalf("Build = %v, want it to wrap %v", err, errDown)
		}
	})
	t.Run("a setting that does not encode", func(t *testing.T) {
		t.Parallel()
		w := newSnapWorld()
		w.settings[snapAlex] = []syncmod.Setting{{PrincipalID: snapAlex, Key: "theme", Value: json.RawMessage(`{`), Version: 1}}
		if _, err := newSnapshot(t, w).Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); err == nil || !strings.Contains(err.Error(), "encode") {
			t.Fatalf("Build = %v, want the encoder's error", err)
		}
	})
	t.Run("a thread decision", func(t *testing.T) {
		t.Parallel()
		w := newSnapWorld()
		d := &erringDecider{snapWorld: w, err: errors.New("policy table unreadable")}
		deps := snapDeps(w)
		deps.Authorizer = d
		s, err := app.NewSnapshot(deps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); !errors.Is(err, d.err) {
			t.Fatalf("Build = %v, want it to wrap %v", err, d.err)
		}
	})
}

// erringDecider fails every thread.read decision with err (not a denial).
type erringDecider struct {
	*snapWorld
	err error
}

func (e *erringDecider) ForActor(ctx context.Context) (authz.Decider, error) {
	d, err := e.snapWorld.ForActor(ctx)
	if err != nil {
		return nil, err
	}
	return erringThreads{Decider: d, err: e.err}, nil
}

type erringThreads struct {
	authz.Decider
	err error
}

func (e erringThreads) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	if action == kernel.ActionThreadRead {
		return e.err
	}
	return e.Decider.Authorize(ctx, action, res)
}

// secondFails lets the gate's ForActor through and fails the build's.
type secondFails struct {
	*snapWorld
	err   error
	calls int
}

func (s *secondFails) ForActor(ctx context.Context) (authz.Decider, error) {
	s.calls++
	if s.calls > 1 {
		return nil, s.err
	}
	return s.snapWorld.ForActor(ctx)
}

func TestNewSnapshotRequiresEveryDependency(t *testing.T) {
	t.Parallel()
	_, err := app.NewSnapshot(app.SnapshotDeps{})
	if err == nil {
		t.Fatal("NewSnapshot without dependencies succeeded")
	}
	for _, name := range []string{"versions", "authorizer", "principals", "instance", "spaces", "channels", "threads", "mentions", "personal", "agents", "flags", "runs"} {
		if !strings.Contains(err.Error(), name+" is nil") {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	deps := snapDeps(newSnapWorld())
	deps.Parallel = 1
	if _, err := app.NewSnapshot(deps); err == nil || !strings.Contains(err.Error(), "sync.snapshot_parallelism is 1, want at least 2") {
		t.Errorf("NewSnapshot with sync.snapshot_parallelism 1: %v, want it refused", err)
	}
}

// waitFor polls cond until it holds, failing the test after within.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(time.Millisecond)
	}
}

var etagPattern = regexp.MustCompile(`^"[A-Za-z0-9_-]{11}"$`)

// TestSnapshotETag: a strong tag, equal for equal snapshots, different when any part changes.
func TestSnapshotETag(t *testing.T) {
	t.Parallel()
	base := build(t, newSnapWorld(), snapAlex, actor.KindPerson)
	if !etagPattern.MatchString(base.ETag) {
		t.Fatalf("ETag %q is not a quoted strong tag", base.ETag)
	}
	if again := build(t, newSnapWorld(), snapAlex, actor.KindPerson); again.ETag != base.ETag {
		t.Fatalf("two builds of one world: %q and %q", base.ETag, again.ETag)
	}
	changes := map[string]func(w *snapWorld){
		"head":               func(w *snapWorld) { w.head++ },
		"epoch":              func(w *snapWorld) { w.epoch = uuid.New() },
		"permission version": func(w *snapWorld) { w.pv++ },
		"a setting":          func(w *snapWorld) { w.settings[snapAlex][1].Version++ },
		"a draft":            func(w *snapWorld) { w.drafts[snapAlex][0].Version++ },
		"a read state": func(w *snapWorld) {
			rs := w.readStates[snapAlex][snapT1]
			rs.LastReadSeq++
			w.readStates[snapAlex][snapT1] = rs
		},
		"a space": func(w *snapWorld) { w.spaces[0].Version++ },
		"a flag":  func(w *snapWorld) { w.flags[0].Enabled = true },
		"the sidebar": func(w *snapWorld) {
			sb := w.sidebars[snapAlex]
			sb.Sections[3].Collapsed = true
			w.sidebars[snapAlex] = sb
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newSnapWorld()
			change(w)
			if v := build(t, w, snapAlex, actor.KindPerson); v.ETag == base.ETag {
				t.Fatalf("the ETag did not change with %s", name)
			}
		})
	}
	t.Run("is the hash of the body", func(t *testing.T) {
		t.Parallel()
		if tag := conditional.Tag(base.Body); tag != base.ETag {
			t.Fatalf("Tag(Body) = %q, want %q", tag, base.ETag)
		}
		if tag := conditional.Tag(append(slices.Clone(base.Body), ' ')); tag == base.ETag {
			t.Fatal("another body has the same tag")
		}
	})
}

// TestSnapshotEncodesOnce: the view is encoded once per build, and calls that join a build
// share its body.
func TestSnapshotEncodesOnce(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	var encodings atomic.Int64
	deps := snapDeps(w)
	deps.Encoder = app.SnapshotEncoderFunc(func(v syncmod.SnapshotView) ([]byte, error) {
		encodings.Add(1)
		return snapJSON(v)
	})
	s, err := app.NewSnapshot(deps)
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	v, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if n := encodings.Load(); n != 1 || len(v.Body) == 0 {
		t.Fatalf("%d encodings, body of %d bytes; want one encoding", n, len(v.Body))
	}
	t.Run("a failing encoder fails the build", func(t *testing.T) {
		deps := snapDeps(newSnapWorld())
		boom := errors.New("encoder failed")
		deps.Encoder = app.SnapshotEncoderFunc(func(syncmod.SnapshotView) ([]byte, error) { return nil, boom })
		s, err := app.NewSnapshot(deps)
		if err != nil {
			t.Fatalf("NewSnapshot: %v", err)
		}
		if _, err := s.Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); !errors.Is(err, boom) {
			t.Fatalf("Build = %v, want the encoder's error", err)
		}
	})
}

// TestSnapshotPinsOneScope: the sources that authorize on their own (spaces, channels, agents)
// find the Scope the snapshot read after its head pinned in their context, so every part is
// filtered with the grants of the snapshot's permission_version and none reads it again.
func TestSnapshotPinsOneScope(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	v := build(t, w, snapAlex, actor.KindPerson)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, source := range []string{"Spaces.List", "ListVisible", "Agents.List"} {
		if got, ok := w.pins[source]; !ok || got != v.PermissionVersion {
			t.Errorf("%s saw pinned version %d (recorded %v), want %d", source, got, ok, v.PermissionVersion)
		}
	}
}
