package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

type buildResult struct {
	v   syncmod.SnapshotView
	err error
}

// startBuild runs s.Build(ctx) in a goroutine; the result arrives on the channel.
func startBuild(ctx context.Context, s *app.Snapshot) <-chan buildResult {
	out := make(chan buildResult, 1)
	go func() {
		v, err := s.Build(ctx)
		out <- buildResult{v, err}
	}()
	return out
}

// result waits for one build's result.
func result(t *testing.T, ch <-chan buildResult) buildResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatal("Build did not return")
		return buildResult{}
	}
}

// entered waits until a build reads the head.
func entered(t *testing.T, w *snapWorld) {
	t.Helper()
	select {
	case <-w.entered:
	case <-time.After(within):
		t.Fatal("no build read the head")
	}
}

// blockingWorld is the fixed world whose head read waits until the test closes w.block.
func blockingWorld() *snapWorld {
	w := newSnapWorld()
	w.block = make(chan struct{})
	w.entered = make(chan struct{}, 100)
	return w
}

// TestSnapshotCoalescesConcurrentBuilds: calls of one actor that arrive while its build runs
// share that build: one head read, one answer for all.
func TestSnapshotCoalescesConcurrentBuilds(t *testing.T) {
	t.Parallel()
	w := blockingWorld()
	s := newSnapshot(t, w)
	ctx := snapAs(t.Context(), snapAlex, actor.KindPerson)
	first := startBuild(ctx, s)
	entered(t, w)
	const joiners = 8
	var rest []<-chan buildResult
	for range joiners {
		rest = append(rest, startBuild(ctx, s))
	}
	waitFor(t, func() bool { return app.SnapshotWaiters(s) == joiners+1 })
	close(w.block)
	want := result(t, first)
	if want.err != nil {
		t.Fatalf("Build: %v", want.err)
	}
	for _, ch := range rest {
		r := result(t, ch)
		if r.err != nil || r.v.ETag != want.v.ETag || r.v.HeadSeq != want.v.HeadSeq {
			t.Fatalf("a joined call got %q, %v; the build gave %q", r.v.ETag, r.err, want.v.ETag)
		}
	}
	if n := w.count("EventSeq"); n != 1 {
		t.Fatalf("%d builds for %d concurrent calls of one actor, want 1", n, joiners+1)
	}
	if n := w.count("ForActor"); n != joiners+2 {
		t.Fatalf("ForActor called %d times, want one gate per call and one for the build (%d)", n, joiners+2)
	}
}

// TestSnapshotSharesOnlyOneActorAtOnePermissionVersion: another principal, another kind of
// actor with the same id, or the same actor after a grant change gets a build of its own, so
// no call is answered with permissions older than its own arrival.
func TestSnapshotSharesOnlyOneActorAtOnePermissionVersion(t *testing.T) {
	t.Parallel()
	w := blockingWorld()
	s := newSnapshot(t, w)
	alex := snapAs(t.Context(), snapAlex, actor.KindPerson)
	alex1 := startBuild(alex, s)
	entered(t, w)
	sam := startBuild(snapAs(t.Context(), snapSam, actor.KindPerson), s)
	entered(t, w)
	scoped := startBuild(actor.With(t.Context(), actor.Actor{PrincipalID: snapAlex, Kind: actor.KindPerson, Scopes: []string{"messages:read"}}), s)
	entered(t, w)
	w.mu.Lock()
	w.pv++
	w.mu.Unlock()
	alex2 := startBuild(alex, s)
	entered(t, w)
	close(w.block)
	r1, r2, rs, rc := result(t, alex1), result(t, alex2), result(t, sam), result(t, scoped)
	for _, r := range []buildResult{r1, r2, rs, rc} {
		if r.err != nil {
			t.Fatalf("Build: %v", r.err)
		}
	}
	// Both builds read their Scope after the head, so both see the new version; what matters
	// is that the later call did not join the earlier build (four head reads below).
	if r2.v.PermissionVersion != 13 {
		t.Fatalf("the call after the grant change got permission version %d, want 13", r2.v.PermissionVersion)
	}
	if rs.v.Principal.ID != snapSam {
		t.Fatalf("Sam got the snapshot of %s", rs.v.Principal.ID)
	}
	if n := w.count("EventSeq"); n != 4 {
		t.Fatalf("%d builds, want 4", n)
	}
}

// TestSnapshotCallerThatLeavesDoesNotStopTheOthers: a caller whose context ends returns at
// once; the build goes on for the callers still waiting.
func TestSnapshotCallerThatLeavesDoesNotStopTheOthers(t *testing.T) {
	t.Parallel()
	w := blockingWorld()
	s := newSnapshot(t, w)
	ctx := snapAs(t.Context(), snapAlex, actor.KindPerson)
	leaving, leave := context.WithCancel(ctx)
	defer leave()
	leaver := startBuild(leaving, s)
	entered(t, w)
	stayer := startBuild(ctx, s)
	waitFor(t, func() bool { return app.SnapshotWaiters(s) == 2 })
	leave()
	if r := result(t, leaver); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the leaving call got %v, want context.Canceled", r.err)
	}
	waitFor(t, func() bool { return app.SnapshotWaiters(s) == 1 })
	close(w.block)
	if r := result(t, stayer); r.err != nil || r.v.HeadSeq != 1300 {
		t.Fatalf("the staying call got %d, %v", r.v.HeadSeq, r.err)
	}
	if n := w.count("EventSeq"); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

// TestSnapshotBuildStopsWhenEveryCallerLeft: with nobody waiting the build's context ends,
// and the next call starts a build of its own instead of joining the abandoned one.
func TestSnapshotBuildStopsWhenEveryCallerLeft(t *testing.T) {
	t.Parallel()
	w := blockingWorld()
	s := newSnapshot(t, w)
	ctx := snapAs(t.Context(), snapAlex, actor.KindPerson)
	leaving, leave := context.WithCancel(ctx)
	leaver := startBuild(leaving, s)
	entered(t, w)
	leave()
	if r := result(t, leaver); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the leaving call got %v, want context.Canceled", r.err)
	}
	// The abandoned build's head read returns with its context's end (the world's block is
	// still closed to it); a new call builds anew.
	next := startBuild(ctx, s)
	entered(t, w)
	close(w.block)
	if r := result(t, next); r.err != nil {
		t.Fatalf("Build after an abandoned build: %v", r.err)
	}
	if n := w.count("EventSeq"); n != 2 {
		t.Fatalf("%d builds, want 2", n)
	}
}

// TestSnapshotBuildsAnewForEveryLaterCall: nothing is cached; a call after a build reads
// everything again.
func TestSnapshotBuildsAnewForEveryLaterCall(t *testing.T) {
	t.Parallel()
	w := newSnapWorld()
	s := newSnapshot(t, w)
	ctx := snapAs(t.Context(), snapAlex, actor.KindPerson)
	a, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.head++
	w.mu.Unlock()
	b, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.HeadSeq != a.HeadSeq+1 || a.ETag == b.ETag {
		t.Fatalf("second build has head %d tag %q after %d %q", b.HeadSeq, b.ETag, a.HeadSeq, a.ETag)
	}
}

// TestSnapshotSharesFailures: a failed build fails every call that shared it.
func TestSnapshotSharesFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		arm   func(w *snapWorld)
		check func(err error) bool
	}{
		{
			name:  "error",
			arm:   func(w *snapWorld) { w.fail["Info"] = errDown },
			check: func(err error) bool { return errors.Is(err, errDown) },
		},
		{
			name:  "panic",
			arm:   func(w *snapWorld) { w.panicOn = "Info" },
			check: func(err error) bool { return err != nil && strings.Contains(err.Error(), "Info panics") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := blockingWorld()
			tc.arm(w)
			s := newSnapshot(t, w)
			ctx := snapAs(t.Context(), snapAlex, actor.KindPerson)
			first := startBuild(ctx, s)
			entered(t, w)
			second := startBuild(ctx, s)
			waitFor(t, func() bool { return app.SnapshotWaiters(s) == 2 })
			close(w.block)
			for _, ch := range []<-chan buildResult{first, second} {
				if r := result(t, ch); !tc.check(r.err) {
					t.Fatalf("Build = %v", r.err)
				}
			}
			// The process survived the panic, and the next call builds again.
			w.mu.Lock()
			w.fail, w.panicOn = map[string]error{}, ""
			w.mu.Unlock()
			if _, err := s.Build(ctx); err != nil {
				t.Fatalf("Build after a failed build: %v", err)
			}
		})
	}
}

// TestSnapshotIgnoresTheDevice: two devices of one principal share a build; a device makes no
// difference to what the principal sees (a pending one is refused at the gate).
func TestSnapshotIgnoresTheDevice(t *testing.T) {
	t.Parallel()
	w := blockingWorld()
	s := newSnapshot(t, w)
	laptop := actor.With(t.Context(), actor.Actor{PrincipalID: snapAlex, Kind: actor.KindPerson, DeviceID: uuid.New()})
	phone := actor.With(t.Context(), actor.Actor{PrincipalID: snapAlex, Kind: actor.KindPerson, DeviceID: uuid.New()})
	a := startBuild(laptop, s)
	entered(t, w)
	b := startBuild(phone, s)
	waitFor(t, func() bool { return app.SnapshotWaiters(s) == 2 })
	close(w.block)
	if ra, rb := result(t, a), result(t, b); ra.err != nil || rb.err != nil || ra.v.ETag != rb.v.ETag {
		t.Fatalf("results %v %v", ra.err, rb.err)
	}
	if n := w.count("EventSeq"); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}
