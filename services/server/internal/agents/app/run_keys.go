package app

import "bothy.example.com/server/internal/kernel/config"

// KeyRunProgressMaxLength bounds a run's progress text (createRun, updateRun): a line or a
// short paragraph of what the agent is doing, repeated in every run.* event, so it must not
// grow the log without bound. The composition root reads it into RunsDeps.ProgressMaxLength.
var KeyRunProgressMaxLength = config.Define("agents.run_progress_max_length", config.KindInt, "1000",
	"most characters of a run's progress text (createRun, updateRun); a longer one is refused with 400 validation_failed; at least 1")
