package httpapi_test

import (
	"context"
	"sync"

	"bothy.example.com/server/internal/agents"
)

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
