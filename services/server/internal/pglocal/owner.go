package pglocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerLockName is the file next to the data directory on which the process that started the
// cluster (its owner) holds an exclusive flock for as long as its Cluster runs. The kernel drops
// the lock when the owner exits, however it dies, so a held lock means a live owner, and a
// postmaster running without a held lock was left behind. While its server accepts connections
// the owner keeps the postmaster's pid in the file, so that other processes attach only to the
// server the owner started, never to a leftover the owner is about to stop.
const ownerLockName = "owner.lock"

// claim makes c either the owner of the cluster or attached to the cluster of a live owner. It
// takes the owner lock when it is free and returns; c.lock is then set and the caller starts the
// server. While another process holds the lock it waits, within ctx, until that owner's server
// accepts connections and attaches to it (c.attached, c.pid, c.port set), or until the lock
// becomes free and takes it. An exclusive claim fails with ErrInUse while another process holds
// the lock.
func (c *Cluster) claim(ctx context.Context, exclusive bool) error {
	name := filepath.Join(filepath.Dir(c.dir), ownerLockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // G304: next to the data directory pglocal manages.
	if err != nil {
		return fmt.Errorf("open owner lock: %w", err)
	}
	logged := false
	err = c.poll(ctx, func() (bool, error) {
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
		case err == nil:
			c.lock = f
			return true, nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return false, fmt.Errorf("lock %s: %w", name, err)
		case exclusive:
			return false, fmt.Errorf("%w (another process holds %s)", ErrInUse, name)
		}
		pid, port, ok, err := c.ownersServer(f)
		if err != nil {
			return false, err
		}
		if ok {
			c.attached, c.pid, c.port = true, pid, port
			return true, nil
		}
		if !logged {
			c.logger.InfoContext(ctx, "waiting for the postgresql server another process is starting", "dir", c.dir)
			logged = true
		}
		return false, nil
	})
	if c.lock == nil {
		_ = f.Close()
	}
	if err != nil {
		return fmt.Errorf("wait for the server of the process owning %s: %w", c.dir, err)
	}
	if c.lock != nil {
		// A dead owner may have left its postmaster's pid; nothing runs for us yet.
		return c.publish(0)
	}
	c.logger.InfoContext(ctx, "attached to the postgresql server of another process", "dir", c.dir, "port", c.port, "pid", c.pid)
	return nil
}

// ownersServer reports the postmaster of the live owner holding lock f: its pid and port, once
// the owner has published the pid and the server is up and says it is ready. A published
// postmaster that is gone died under its owner (the owner clears the pid before it stops its
// server), which no wait mends: that is an error.
func (c *Cluster) ownersServer(f *os.File) (pid, port int, ok bool, err error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return 0, 0, false, nil
	}
	published, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || published <= 0 {
		return 0, 0, false, nil
	}
	if !worksIn(published, c.dir) {
		return 0, 0, false, fmt.Errorf("the server (pid %d) of the process owning %s is gone "+
			"while that process still runs: stop that process first", published, c.dir)
	}
	pf, err := readPidFile(c.dir)
	if err != nil || pf.pid != published || !pf.ready || pf.port <= 0 {
		return 0, 0, false, nil
	}
	return pf.pid, pf.port, true, nil
}

// publish records pid (0: none) in the owner lock file for attaching processes to find.
func (c *Cluster) publish(pid int) error {
	content := ""
	if pid > 0 {
		content = strconv.Itoa(pid) + "\n"
	}
	if err := c.lock.Truncate(0); err != nil {
		return fmt.Errorf("write owner lock: %w", err)
	}
	if _, err := c.lock.WriteAt([]byte(content), 0); err != nil {
		return fmt.Errorf("write owner lock: %w", err)
	}
	return nil
}

// releaseLock clears the published pid and drops the owner lock.
func (c *Cluster) releaseLock() error {
	if c.lock == nil {
		return nil
	}
	err := errors.Join(c.publish(0), c.lock.Close())
	c.lock = nil
	if err != nil {
		return fmt.Errorf("release owner lock: %w", err)
	}
	return nil
}
