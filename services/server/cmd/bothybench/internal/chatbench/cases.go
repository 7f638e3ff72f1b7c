package chatbench

import (
	"context"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Threads is the thread list case (threadListCase).
type Threads struct{}

// Name is threads.
func (Threads) Name() string { return "threads" }

// World is none: the case builds its channel in the main App.
func (Threads) World() string { return "" }

// Run measures listChannelThreads over HTTP against its bare statements.
func (Threads) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := threadListCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}

// Search is the search case (searchCase).
type Search struct{}

// Name is search.
func (Search) Name() string { return "search" }

// World is none: the case builds a world of its own in a database of its own.
func (Search) World() string { return "" }

// Run measures searchMessages over HTTP against the bare SQL of the same answer.
func (Search) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := searchCase(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}
