package httpapi_test

import (
	"context"
	"sync"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
)

// call is one Authorize call a fakeAuthorizer saw.
type call struct {
	action kernel.Action
	res    authorize.Resource
}

// fakeAuthorizer answers every Authorize with err and records the calls.
type fakeAuthorizer struct {
	err error

	mu    sync.Mutex
	calls []call
}

func (f *fakeAuthorizer) Authorize(_ context.Context, action kernel.Action, res authorize.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{action: action, res: res})
	return f.err
}

func (f *fakeAuthorizer) seen() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// fakeInfo returns info and err, counting the reads.
type fakeInfo struct {
	info instance.Info
	err  error

	mu    sync.Mutex
	reads int
}

func (f *fakeInfo) Info(context.Context) (instance.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.info, f.err
}

func (f *fakeInfo) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}
