package main

import "context"

// appendBenchCase is the append throughput case (appendCases).
type appendBenchCase struct{}

// Name is append.
func (appendBenchCase) Name() string { return "append" }

// World is none: the case runs on the main App.
func (appendBenchCase) World() string { return "" }

// Run measures the appender against the bare loop for every writer count and batch size.
func (appendBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	rs, err := appendCases(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{appendSection{Results: rs, admission: env.Settings.AppendConcurrency}}, nil
}

// tailBenchCase is the tail latency case (latencyCase).
type tailBenchCase struct{}

// Name is tail.
func (tailBenchCase) Name() string { return "tail" }

// World is none: the case runs on the main App.
func (tailBenchCase) World() string { return "" }

// Run measures the log tail's commit-to-subscriber latency against the bare round trip.
func (tailBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	env.Progress("tail latency at %d events/s", env.Options.rate)
	r, err := latencyCase(ctx, env.App, env.URL, env.Options)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}

// postBenchCase is the postMessage over HTTP case (postMessageCase).
type postBenchCase struct{}

// Name is post.
func (postBenchCase) Name() string { return "post" }

// World is none: the case serves the main App.
func (postBenchCase) World() string { return "" }

// Run measures postMessage over HTTP against the bare loop.
func (postBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := postMessageCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	r.admission = env.Settings.AppendConcurrency
	return []section{r}, nil
}

// ingestBenchCase is the ingest case (ingestCase). It runs last: its Demo world bootstraps the
// owner when there is none.
type ingestBenchCase struct{}

// Name is ingest.
func (ingestBenchCase) Name() string { return "ingest" }

// World is none: the case runs on the main App.
func (ingestBenchCase) World() string { return "" }

// Run times bothy ingest git against the bare loop.
func (ingestBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := ingestCase(ctx, env.App, env.Bare, env.Options, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}
