// Package gatewaybench holds the bench's WebSocket gateway cases (ADR 0038), each on an App of
// its own with the gateway role and its clients in a child process: the memory of idle
// connections, commit-to-frame latency, fan-out, revocation (gateway) and invocation delivery
// to agents (invoke).
package gatewaybench
