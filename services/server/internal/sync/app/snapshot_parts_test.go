package app_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/sync/app"
)

// partsWorld wraps the snapshot's fake world so that a test can hold, fail or time each part
// read after the Scope: every call goes through enter and leave, which track how many parts
// are in flight at once, and through hook, the test's own behaviour for a part by name.
type partsWorld struct {
	*snapWorld
	delay    time.Duration
	hook     map[string]func(ctx context.Context) error
	inFlight atomic.Int64
	peak     atomic.Int64
}

func (p *partsWorld) part(ctx context.Context, name string) error {
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	if p.delay > 0 {
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if h := p.hook[name]; h != nil {
		return h(ctx)
	}
	return nil
}

func (p *partsWorld) Ref(ctx context.Context, id uuid.UUID) (identity.PrincipalRef, error) {
	if err := p.part(ctx, "Ref"); err != nil {
		return identity.PrincipalRef{}, err
	}
	return p.snapWorld.Ref(ctx, id)
}

func (p *partsWorld) Info(ctx context.Context) (instance.Info, error) {
	if err := p.part(ctx, "Info"); err != nil {
		return instance.Info{}, err
	}
	return p.snapWorld.Info(ctx)
}

func (p *partsWorld) ListVisible(ctx context.Context) ([]chat.ChannelView, error) {
	if err := p.part(ctx, "ListVisible"); err != nil {
		return nil, err
	}
	return p.snapWorld.ListVisible(ctx)
}

func (p *partsWorld) Counters(ctx context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error) {
	if err := p.part(ctx, "Counters"); err != nil {
		return nil, err
	}
	return p.snapWorld.Counters(ctx, channelIDs)
}

func (p *partsWorld) CountUnread(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	if err := p.part(ctx, "CountUnread"); err != nil {
		return nil, err
	}
	return p.snapWorld.CountUnread(ctx, principalID, channelIDs, readSeqs)
}

func (p *partsWorld) PersonalData(ctx context.Context, principalID uuid.UUID) (app.PersonalData, error) {
	if err := p.part(ctx, "PersonalData"); err != nil {
		return app.PersonalData{}, err
	}
	return p.snapWorld.PersonalData(ctx, principalID)
}

func (p *partsWorld) Evaluate(ctx context.Context, a actor.Actor) ([]instance.EvaluatedFlag, error) {
	if err := p.part(ctx, "Evaluate"); err != nil {
		return nil, err
	}
	return p.snapWorld.Evaluate(ctx, a)
}

// partsAgents is the agents source of a partsWorld.
type partsAgents struct{ p *partsWorld }

func (a partsAgents) List(ctx context.Context) ([]agents.Agent, error) {
	if err := a.p.part(ctx, "Agents.List"); err != nil {
		return nil, err
	}
	return snapAgents{a.p.snapWorld}.List(ctx)
}

func newPartsSnapshot(t *testing.T, p *partsWorld) *app.Snapshot {
	t.Helper()
	return newPartsSnapshotOf(t, p, testSnapshotParallelism)
}

// newPartsSnapshotOf is newPartsSnapshot reading at most parallelism parts at once.
func newPartsSnapshotOf(t *testing.T, p *partsWorld, parallelism int) *app.Snapshot {
	t.Helper()
	deps := snapDeps(p.snapWorld)
	deps.Parallel = parallelism
	deps.Principals, deps.Instance, deps.Channels, deps.Threads, deps.Mentions = p, p, p, p, p
	deps.Personal, deps.Flags, deps.Agents = p, p, partsAgents{p}
	s, err := app.NewSnapshot(deps)
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	return s
}

// rendezvous returns a hook for each of two parts that lets its part return only once the
// other has started as well: two parts read one after the other never meet, and their hook
// fails after a while instead of hanging the test.
func rendezvous() (a, b func(ctx context.Context) error) {
	aIn, bIn := make(chan struct{}), make(chan struct{})
	meet := func(mine, other chan struct{}) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			close(mine)
			select {
			case <-other:
				return nil
			case <-time.After(5 * time.Second):
				return errors.New("the other part did not start while this one was in flight")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return meet(aIn, bIn), meet(bIn, aIn)
}

// TestSnapshotReadsPartsConcurrently: after the head, the epoch and the Scope, the parts are
// read concurrently: independent parts are in flight at the same time (the instance and the
// agents; the thread counters and the read states, which need not wait for each other), yet
// never more than the bound at once, and the snapshot is the same as read one by one.
func TestSnapshotReadsPartsConcurrently(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{"Info", "Agents.List"},
		{"Counters", "PersonalData"},
		{"Evaluate", "Ref"},
	} {
		t.Run(tc.a+" and "+tc.b, func(t *testing.T) {
			t.Parallel()
			p := &partsWorld{snapWorld: newSnapWorld(), hook: map[string]func(context.Context) error{}}
			p.hook[tc.a], p.hook[tc.b] = rendezvous()
			v, err := newPartsSnapshot(t, p).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			want := build(t, newSnapWorld(), snapAlex, actor.KindPerson)
			if v.ETag != want.ETag {
				t.Fatalf("the concurrent build differs from the plain one:\n%s\n%s", v.Body, want.Body)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		p := &partsWorld{snapWorld: newSnapWorld(), delay: 20 * time.Millisecond}
		if _, err := newPartsSnapshot(t, p).Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); err != nil {
			t.Fatalf("Build: %v", err)
		}
		if peak := p.peak.Load(); peak < 2 || peak > int64(testSnapshotParallelism) {
			t.Fatalf("at most %d parts in flight at once, want 2 to %d", peak, testSnapshotParallelism)
		}
	})
	t.Run("sync.snapshot_parallelism 2, its least, reads two parts at a time", func(t *testing.T) {
		t.Parallel()
		p := &partsWorld{snapWorld: newSnapWorld(), delay: 5 * time.Millisecond}
		if _, err := newPartsSnapshotOf(t, p, 2).Build(snapAs(t.Context(), snapAlex, actor.KindPerson)); err != nil {
			t.Fatalf("Build: %v", err)
		}
		if peak := p.peak.Load(); peak != 2 {
			t.Fatalf("%d parts in flight at once, want 2", peak)
		}
	})
}

// TestSnapshotMentionsAfterChannelsAndReadStates: the unread mentions are counted with the
// visible channels and the read positions, so neither may be missing when they are: the
// count waits for both, whichever comes last.
func TestSnapshotMentionsAfterChannelsAndReadStates(t *testing.T) {
	t.Parallel()
	for _, slow := range []string{"ListVisible", "PersonalData"} {
		t.Run(slow, func(t *testing.T) {
			t.Parallel()
			p := &partsWorld{snapWorld: newSnapWorld(), hook: map[string]func(context.Context) error{}}
			var done atomic.Bool
			p.hook[slow] = func(context.Context) error {
				time.Sleep(30 * time.Millisecond)
				done.Store(true)
				return nil
			}
			p.hook["CountUnread"] = func(context.Context) error {
				if !done.Load() {
					return fmt.Errorf("the mentions were counted before %s returned", slow)
				}
				return nil
			}
			v, err := newPartsSnapshot(t, p).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if want := build(t, newSnapWorld(), snapAlex, actor.KindPerson); v.ETag != want.ETag {
				t.Fatalf("snapshot differs:\n%s\n%s", v.Body, want.Body)
			}
		})
	}
}

// TestSnapshotPartErrorCancelsTheOthers: the first part that fails ends the build with its
// error at once: the parts still in flight see their context end, the build returns only
// after every one of them returned (no part outlives the build).
func TestSnapshotPartErrorCancelsTheOthers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ failing, held string }{
		{"Agents.List", "Info"},
		{"Evaluate", "Counters"},
		{"PersonalData", "ListVisible"},
		{"Info", "PersonalData"},
	} {
		t.Run(tc.failing, func(t *testing.T) {
			t.Parallel()
			p := &partsWorld{snapWorld: newSnapWorld(), hook: map[string]func(context.Context) error{}}
			boom := errors.New(tc.failing + " is down")
			heldIn := make(chan struct{})
			var heldOut atomic.Bool
			var once sync.Once
			p.hook[tc.held] = func(ctx context.Context) error {
				once.Do(func() { close(heldIn) })
				defer heldOut.Store(true)
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Second):
					return errors.New("the held part was never cancelled")
				}
			}
			p.hook[tc.failing] = func(ctx context.Context) error {
				select {
				case <-heldIn:
				case <-ctx.Done():
					return ctx.Err()
				}
				return boom
			}
			began := time.Now()
			_, err := newPartsSnapshot(t, p).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
			if !errors.Is(err, boom) {
				t.Fatalf("Build = %v, want it to wrap %v", err, boom)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Fatalf("Build took %v: the held part was not cancelled", took)
			}
			if !heldOut.Load() {
				t.Fatal("Build returned while a part was still in flight")
			}
			if n := p.inFlight.Load(); n != 0 {
				t.Fatalf("%d parts in flight after Build returned", n)
			}
		})
	}
}

// TestSnapshotDecidesUnreadThreadsWhileMentionsAreCounted: thread.read on the threads with
// unread messages is decided as soon as the counters and the read positions are in, while the
// mention counts are still being read, not after them.
func TestSnapshotDecidesUnreadThreadsWhileMentionsAreCounted(t *testing.T) {
	t.Parallel()
	p := &partsWorld{snapWorld: newSnapWorld(), hook: map[string]func(context.Context) error{}}
	p.hook["CountUnread"] = func(ctx context.Context) error {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			p.mu.Lock()
			n := 0
			for _, d := range p.decisions {
				if d.action == kernel.ActionThreadRead {
					n++
				}
			}
			p.mu.Unlock()
			if n > 0 {
				return nil
			}
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return errors.New("no thread.read was decided while the mentions were being counted")
	}
	v, err := newPartsSnapshot(t, p).Build(snapAs(t.Context(), snapAlex, actor.KindPerson))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if want := build(t, newSnapWorld(), snapAlex, actor.KindPerson); v.ETag != want.ETag {
		t.Fatalf("snapshot differs:\n%s\n%s", v.Body, want.Body)
	}
}
