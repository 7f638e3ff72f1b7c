package app

// SnapshotWaiters counts the callers of s that wait for a build, so that a coalescing test
// can tell when every concurrent call has joined before it lets the build finish.
func SnapshotWaiters(s *Snapshot) int { return s.flights.waiters() }
