package pgtest

// ServerInfo exposes the local server of this test binary to the crash test: its temporary
// directory, postmaster pid and guardian pid (empty and zero when none runs).
func ServerInfo() (dir string, pid, guard int) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if s, ok := state.srv.(localServer); ok {
		pid = s.c.PID()
	}
	if state.guard != nil {
		guard = state.guard.pid()
	}
	return state.dir, pid, guard
}
