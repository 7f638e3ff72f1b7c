package httpapi_test

import (
	"context"
	"sync"

	"bothy.example.com/server/internal/instance"
)

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
