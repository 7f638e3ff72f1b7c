package app

import "sync/atomic"

// VersionFloor is the newest permission_version this process has committed (a grant change's
// transaction, through Grants). A caller that read the version a moment before (wire reads it
// with the token, catch-up with its head) may tell the Authorizer an older one than a change
// the same request made since: the Authorizer takes the floor when it is newer, so a request
// that changes a grant and then decides again decides with its own change. Changes of other
// processes reach a request as they always did, as if it had come a moment earlier. The zero
// value is ready; a nil floor is always 0. It is safe for concurrent use.
type VersionFloor struct {
	v atomic.Int64
}

// Raise moves the floor up to v; an older v changes nothing.
func (f *VersionFloor) Raise(v int64) {
	if f == nil {
		return
	}
	for {
		cur := f.v.Load()
		if v <= cur || f.v.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Load returns the floor.
func (f *VersionFloor) Load() int64 {
	if f == nil {
		return 0
	}
	return f.v.Load()
}
