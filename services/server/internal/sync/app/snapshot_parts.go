package app

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// partGroup reads a snapshot's parts concurrently, at most a bounded number at once. The first
// part that fails cancels the context of the others, and wait returns its error once every
// part has returned, so no part outlives the build. A panic in a part becomes its error,
// carrying the panic's value and stack: no recoverer would see it on the part's goroutine.
// Unlike golang.org/x/sync/errgroup (not a dependency of the server), the slot is taken by
// the caller of spawn, so parts start in the order spawned: the longest chain first.
type partGroup struct {
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error // the first error; read after wg.Wait
}

// minSnapshotParallel is the least sync.snapshot_parallelism a build can run with: its two
// chains wait for each other (the thread counters for the read positions), so both must be in
// flight at once. A correctness floor of the key, not a limit of its own.
const minSnapshotParallel = 2

// newPartGroup returns a group of at most limit parts in flight under ctx.
func newPartGroup(ctx context.Context, limit int) *partGroup {
	ctx, cancel := context.WithCancel(ctx)
	return &partGroup{ctx: ctx, cancel: cancel, slots: make(chan struct{}, limit)}
}

// spawn waits for a free slot and runs part on a goroutine of its own with the group's
// context; after the group's context ended it starts nothing. A part may wait for another
// part spawned before it (never one spawned after it, which may be waiting for its slot).
func (g *partGroup) spawn(part func(ctx context.Context) error) {
	select {
	case g.slots <- struct{}{}:
	case <-g.ctx.Done():
		g.fail(g.ctx.Err())
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() { <-g.slots }()
		if err := runPart(g.ctx, part); err != nil {
			g.fail(err)
		}
	}()
}

// runPart runs part, turning a panic into an error.
func runPart(ctx context.Context, part func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return part(ctx)
}

// fail records err when it is the first and cancels the other parts.
func (g *partGroup) fail(err error) {
	g.once.Do(func() {
		g.err = err
		g.cancel()
	})
}

// wait returns once every part spawned has returned: nil when all succeeded, otherwise the
// first error.
func (g *partGroup) wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}
