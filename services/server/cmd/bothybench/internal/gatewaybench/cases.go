package gatewaybench

import (
	"context"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Gateway is the WebSocket gateway's cases (gatewayCases).
type Gateway struct{}

// Name is gateway.
func (Gateway) Name() string { return "gateway" }

// World is none: the cases wire an App of their own on a database of their own.
func (Gateway) World() string { return "" }

// Run measures the gateway's memory, latency, fan-out and revocation against their baselines.
func (Gateway) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := gatewayCases(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}

// Invoke is the invocation delivery case (invokeCase).
type Invoke struct{}

// Name is invoke.
func (Invoke) Name() string { return "invoke" }

// World is none: the case wires an App of its own on a database of its own.
func (Invoke) World() string { return "" }

// Run measures invocation delivery to agents on the gateway against the bare round trip.
func (Invoke) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	r, err := invokeCase(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}
