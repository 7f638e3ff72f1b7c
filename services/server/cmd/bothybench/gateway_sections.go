package main

// Key is the gateway member of benchmarks.json.
func (gatewayResult) Key() string { return "gateway" }

// Targets are the gateway cases' targets (gatewayResult.targets).
func (g gatewayResult) Targets() []target { return g.targets() }

// Key is the invocation_delivery member of benchmarks.json.
func (invokeResult) Key() string { return "invocation_delivery" }

// Targets are the invocation case's targets (invokeResult.targets).
func (r invokeResult) Targets() []target { return r.targets() }
