package main

import "context"

// threadsBenchCase is the thread list case (threadListCase).
type threadsBenchCase struct{}

// Name is threads.
func (threadsBenchCase) Name() string { return "threads" }

// World is none: the case builds its channel in the main App.
func (threadsBenchCase) World() string { return "" }

// Run measures listChannelThreads over HTTP against its bare statements.
func (threadsBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := threadListCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}

// searchBenchCase is the search case (searchCase).
type searchBenchCase struct{}

// Name is search.
func (searchBenchCase) Name() string { return "search" }

// World is none: the case builds a world of its own in a database of its own.
func (searchBenchCase) World() string { return "" }

// Run measures searchMessages over HTTP against the bare SQL of the same answer.
func (searchBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := searchCase(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}
