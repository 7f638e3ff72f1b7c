package main

import "context"

// gatewayBenchCase is the WebSocket gateway's cases (gatewayCases).
type gatewayBenchCase struct{}

// Name is gateway.
func (gatewayBenchCase) Name() string { return "gateway" }

// World is none: the cases wire an App of their own on a database of their own.
func (gatewayBenchCase) World() string { return "" }

// Run measures the gateway's memory, latency, fan-out and revocation against their baselines.
func (gatewayBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := gatewayCases(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}

// invokeBenchCase is the invocation delivery case (invokeCase).
type invokeBenchCase struct{}

// Name is invoke.
func (invokeBenchCase) Name() string { return "invoke" }

// World is none: the case wires an App of its own on a database of its own.
func (invokeBenchCase) World() string { return "" }

// Run measures invocation delivery to agents on the gateway against the bare round trip.
func (invokeBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	r, err := invokeCase(ctx, env.Options, env.URL, env.Logger, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}
