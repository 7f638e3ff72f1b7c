package app

import "bothy.example.com/server/internal/kernel/config"

// KeyRunProgressMaxLength bounds a run's progress text (createRun, updateRun): a line or a
// short paragraph of what the agent is doing, repeated in every run.* event, so it must not
// grow the log without bound. The composition root reads it into RunsDeps.ProgressMaxLength.
var KeyRunProgressMaxLength = config.Define("agents.run_progress_max_length", config.KindInt, "1000",
	"most characters of a run's progress text (createRun, updateRun); a longer one is refused with 400 validation_failed; at least 1")

// KeyRunStaleAfter is how long a queued or running run may go without an update before the
// sweep (Runs.Expire, run by the invocation sweeper's loop) ends it as failed (ADR 0032): an
// agent that went away leaves no run in progress in everyone's snapshot for ever. An agent
// working longer keeps its run alive with updateRun (a progress text, or the same state).
var KeyRunStaleAfter = config.Define("agents.run_stale_after", config.KindDuration, "30m",
	"how long a queued or running run may go without an update (createRun, updateRun) before the sweep ends it as failed with a progress text saying it expired (more than 0)")

// KeyRunExpiryBatch bounds the runs one expiry sweep ends, in one transaction, so a sweep
// after an outage holds a bounded number of row locks; the rest wait for the next sweep.
var KeyRunExpiryBatch = config.Define("agents.run_expiry_batch", config.KindInt, "500",
	"most stale runs one sweep ends as failed (agents.run_stale_after); the others wait for the next sweep (at least 1)")
