// Package logbench holds the bench's cases of the event log on the main App (ADR 0038): append
// throughput, the log tail's latency, postMessage over HTTP and bothy ingest git, each beside
// the bare append loop or the bare LISTEN/NOTIFY round trip.
package logbench
