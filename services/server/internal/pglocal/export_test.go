package pglocal

// ReleaseOwnership closes c's owner lock without stopping its server, as the death of the
// owning process would: the next Start treats the server as left behind.
func ReleaseOwnership(c *Cluster) {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.lock != nil {
		_ = c.lock.Close()
		c.lock = nil
	}
}

// OwnerLockName is the name of the owner lock file next to the data directory.
const OwnerLockName = ownerLockName
