package logbench

import (
	"context"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Append is the append throughput case (appendCases).
type Append struct{}

// Name is append.
func (Append) Name() string { return "append" }

// World is none: the case runs on the main App.
func (Append) World() string { return "" }

// Run measures the appender against the bare loop for every writer count and batch size.
func (Append) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	rs, err := appendCases(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{AppendSection{Results: rs, admission: env.Settings.AppendConcurrency}}, nil
}

// Tail is the tail latency case (latencyCase).
type Tail struct{}

// Name is tail.
func (Tail) Name() string { return "tail" }

// World is none: the case runs on the main App.
func (Tail) World() string { return "" }

// Run measures the log tail's commit-to-subscriber latency against the bare round trip.
func (Tail) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	env.Progress("tail latency at %d events/s", env.Options.Rate)
	r, err := latencyCase(ctx, env.App, env.URL, env.Options)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}

// Post is the postMessage over HTTP case (postMessageCase).
type Post struct{}

// Name is post.
func (Post) Name() string { return "post" }

// World is none: the case serves the main App.
func (Post) World() string { return "" }

// Run measures postMessage over HTTP against the bare loop.
func (Post) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := postMessageCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	r.admission = env.Settings.AppendConcurrency
	return []bench.Section{r}, nil
}

// Ingest is the ingest case (ingestCase). It runs last: its Demo world bootstraps the
// owner when there is none.
type Ingest struct{}

// Name is ingest.
func (Ingest) Name() string { return "ingest" }

// World is none: the case runs on the main App.
func (Ingest) World() string { return "" }

// Run times bothy ingest git against the bare loop.
func (Ingest) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := ingestCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}
