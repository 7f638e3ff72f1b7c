package app

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// coalescer lets concurrent calls with one key share one run of a function: spec 03 asks that
// a reconnect storm cost one snapshot build per actor, not one per request. A call joins the
// run of its key that is in progress, or starts one; nothing is cached, so a call after a run
// ended starts a new one.
//
// Unlike golang.org/x/sync/singleflight (not a dependency of the server), the run does not
// belong to the first caller. It runs on a goroutine of its own, with a context that keeps
// the first caller's values but not its deadline or cancellation, and that ends only when
// every caller waiting for the run has left: one impatient client cannot fail the build of
// the others, and a build nobody waits for any more stops. A panic in the run becomes an
// error for every caller instead of ending the process, which no HTTP recoverer would see on
// that goroutine.
type coalescer[V any] struct {
	mu      sync.Mutex
	running map[string]*flight[V]
}

// flight is one run and the callers waiting for it.
type flight[V any] struct {
	done    chan struct{} // closed when val and err are set
	val     V
	err     error
	waiters int // guarded by the coalescer's mu
	cancel  context.CancelFunc
}

func newCoalescer[V any]() *coalescer[V] {
	return &coalescer[V]{running: map[string]*flight[V]{}}
}

// do returns the result of the run of key in progress, starting fn as that run when there is
// none. A caller whose ctx ends returns ctx.Err() at once; the run goes on for the others.
func (g *coalescer[V]) do(ctx context.Context, key string, fn func(ctx context.Context) (V, error)) (V, error) {
	g.mu.Lock()
	f, ok := g.running[key]
	if !ok {
		// The run calls cancel when it ends, and so does the last caller to leave.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx)) //nolint:gosec // G118: cancel is kept in the flight and called by run and leave
		f = &flight[V]{done: make(chan struct{}), cancel: cancel}
		g.running[key] = f
		go g.run(runCtx, key, f, fn)
	}
	f.waiters++
	g.mu.Unlock()
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		g.leave(key, f)
		var zero V
		return zero, ctx.Err()
	}
}

// leave takes a caller off f; the last one to leave stops the run and forgets it, so the next
// call starts afresh instead of joining a run whose context has ended.
func (g *coalescer[V]) leave(key string, f *flight[V]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f.waiters--
	if f.waiters > 0 {
		return
	}
	f.cancel()
	if g.running[key] == f {
		delete(g.running, key)
	}
}

func (g *coalescer[V]) run(ctx context.Context, key string, f *flight[V], fn func(ctx context.Context) (V, error)) {
	defer f.cancel()
	val, err := protect(ctx, fn)
	g.mu.Lock()
	f.val, f.err = val, err
	if g.running[key] == f {
		delete(g.running, key)
	}
	g.mu.Unlock()
	close(f.done)
}

// protect runs fn, turning a panic into an error that carries the panic's value and stack.
func protect[V any](ctx context.Context, fn func(ctx context.Context) (V, error)) (val V, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(ctx)
}

// waiters counts the callers waiting for a run, over every key.
func (g *coalescer[V]) waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, f := range g.running {
		n += f.waiters
	}
	return n
}
