package httpapi_test

import (
	"context"
	"sync"

	"bothy.example.com/server/internal/agents"
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

// fakeAgents creates and lists agents from fixed answers, recording the inputs.
type fakeAgents struct {
	created   agents.Agent
	createErr error
	list      []agents.Agent
	listErr   error

	mu     sync.Mutex
	inputs []agents.CreateInput
	lists  int
}

func (f *fakeAgents) Create(_ context.Context, in agents.CreateInput) (agents.Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	return f.created, f.createErr
}

func (f *fakeAgents) List(context.Context) ([]agents.Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return f.list, f.listErr
}

func (f *fakeAgents) seen() (inputs []agents.CreateInput, lists int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agents.CreateInput(nil), f.inputs...), f.lists
}
