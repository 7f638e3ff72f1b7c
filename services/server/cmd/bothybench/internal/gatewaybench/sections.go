package gatewaybench

import "bothy.example.com/server/cmd/bothybench/internal/bench"

// Key is the gateway member of benchmarks.json.
func (GatewayResult) Key() string { return "gateway" }

// Targets are the gateway cases' targets (gatewayResult.targets).
func (g GatewayResult) Targets() []bench.Target { return g.targets() }

// Key is the invocation_delivery member of benchmarks.json.
func (InvokeResult) Key() string { return "invocation_delivery" }

// Targets are the invocation case's targets (invokeResult.targets).
func (r InvokeResult) Targets() []bench.Target { return r.targets() }
