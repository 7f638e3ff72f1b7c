package ops_test

import (
	"context"
	"errors"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// fakeReadiness is a hand-written Readiness: it answers with its fields and
// records the deadline each call saw, so tests can check the timeout.
type fakeReadiness struct {
	pingErr    error
	pending    int
	pendingErr error
	// block makes Ping wait for its context, like a database that hangs.
	block bool

	mu        sync.Mutex
	deadlines []time.Duration
}

func (f *fakeReadiness) note(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := ctx.Deadline()
	if !ok {
		f.deadlines = append(f.deadlines, -1)
		return
	}
	f.deadlines = append(f.deadlines, time.Until(d))
}

func (f *fakeReadiness) Ping(ctx context.Context) error {
	f.note(ctx)
	if f.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.pingErr
}

func (f *fakeReadiness) PendingMigrations(ctx context.Context) (int, error) {
	f.note(ctx)
	return f.pending, f.pendingErr
}

// failingGatherer is a prometheus.Gatherer whose collection fails.
type failingGatherer struct{}

func (failingGatherer) Gather() ([]*dto.MetricFamily, error) {
	return nil, errors.New("collector exploded at 10.0.0.7")
}
