// Package syncbench holds the sync world (ADR 0038), a second App over a generated log that
// the sync, sdk, sidebar and consumer cases share, and its own cases: the catch-up pages, the
// full catch-up and the snapshot (sync), and an agent's durable consumer (consumer).
package syncbench
