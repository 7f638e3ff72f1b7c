package postgres

// SetAfterBatch sets the hook that runs in the commit phase right after the appender's batch
// succeeded and before COMMIT, so a test can kill a writer exactly there. Tests that set it
// run it in a child process of their own; nil removes it.
func SetAfterBatch(f func()) { afterBatch = f }

// SlotStart exposes slotStart to the external tests.
var SlotStart = slotStart
