package pglocal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// pidFile is what pglocal reads from a postmaster.pid.
type pidFile struct {
	pid   int  // the postmaster's process id (first line)
	port  int  // its TCP port (fourth line), 0 when not yet written
	ready bool // whether its status line (the eighth) says it accepts connections
}

// readPidFile parses the postmaster.pid in dir.
func readPidFile(dir string) (pidFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid")) //nolint:gosec // G304: the data directory pglocal manages.
	if err != nil {
		return pidFile{}, fmt.Errorf("read postmaster.pid: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return pidFile{}, fmt.Errorf("postmaster.pid: malformed pid %q", lines[0])
	}
	const portLine, statusLine = 3, 7 // LOCK_FILE_LINE_PORT and _PM_STATUS, 1-based 4 and 8
	pf := pidFile{pid: pid}
	if len(lines) > portLine {
		pf.port, _ = strconv.Atoi(strings.TrimSpace(lines[portLine]))
	}
	pf.ready = len(lines) > statusLine && strings.TrimSpace(lines[statusLine]) == "ready"
	return pf, nil
}

// clearLeftovers deals with a postmaster.pid left in the data directory. Only the owner calls
// it, so a server still running there belongs to no live process (its owner was killed and the
// server survived) and is stopped with pg_ctl; a
// pid file whose process is gone is removed. Either way it then waits until no process of the
// old server works in the directory any more, since a new postmaster refuses to start while
// old backends still hold the shared memory.
func (c *Cluster) clearLeftovers(ctx context.Context) error {
	pidFile := filepath.Join(c.dir, "postmaster.pid")
	pf, err := readPidFile(c.dir)
	pid := pf.pid
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c.waitNoProcesses(ctx)
	case err != nil:
		c.logger.WarnContext(ctx, "removing unreadable postmaster.pid", "dir", c.dir, "err", err)
		if err := os.Remove(pidFile); err != nil {
			return fmt.Errorf("remove postmaster.pid: %w", err)
		}
	case worksIn(pid, c.dir):
		c.logger.WarnContext(ctx, "stopping a postgresql server left running", "dir", c.dir, "pid", pid)
		out, err := c.command(ctx, c.bins.pgCtl, "stop", "-D", c.dir, "-m", "fast", "-w",
			"-t", strconv.Itoa(int(c.timeouts.Leftover.Seconds()))).CombinedOutput()
		if err != nil {
			return fmt.Errorf("stop server left running (pid %d): %w: %s", pid, err, tail(out))
		}
	default:
		c.logger.WarnContext(ctx, "removing stale postmaster.pid", "dir", c.dir, "pid", pid)
		if err := os.Remove(pidFile); err != nil {
			return fmt.Errorf("remove stale postmaster.pid: %w", err)
		}
	}
	return c.waitNoProcesses(ctx)
}

// waitNoProcesses waits, within embedded.leftover_timeout, until Processes(c.dir) is empty.
func (c *Cluster) waitNoProcesses(ctx context.Context) error {
	dir := c.dir
	ctx, cancel := context.WithTimeout(ctx, c.timeouts.Leftover)
	defer cancel()
	var last []int
	err := c.poll(ctx, func() (bool, error) {
		procs, err := Processes(dir)
		last = procs
		return err == nil && len(procs) == 0, err
	})
	if err != nil {
		return fmt.Errorf("processes %v still work in %s: %w", last, dir, err)
	}
	return nil
}

// worksIn reports whether process pid is alive with its working directory dir, which is how a
// postmaster of that data directory looks (it guards against a recycled pid).
func worksIn(pid int, dir string) bool {
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	return err == nil && cwd == dir
}

// Processes lists the live processes whose working directory is dir or lies inside it, also
// when dir has been deleted. Every PostgreSQL server process works in its data directory, so
// Start uses this to wait out the backends of a killed server, and tests use it to prove that
// nothing was left behind. Processes of other users are invisible when not root.
func Processes(dir string) ([]int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("processes: %w", err)
	}
	roots := []string{abs}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil && resolved != abs {
		roots = append(roots, resolved)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("processes: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil { // exited, a zombie, or not ours to see
			continue
		}
		cwd = strings.TrimSuffix(cwd, " (deleted)")
		for _, r := range roots {
			if cwd == r || strings.HasPrefix(cwd, r+string(filepath.Separator)) {
				out = append(out, pid)
				break
			}
		}
	}
	return out, nil
}

// Alive reports whether pid is a running process; a zombie (exited, not yet reaped) counts as
// gone.
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func randomPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func trimNewline(b []byte) []byte { return bytes.TrimRight(b, "\r\n") }

// tail keeps the end of a command's output or a log for an error message.
func tail(b []byte) string {
	const limit = 2000
	b = bytes.TrimSpace(b)
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(b)
}

// readFrom returns the content of f from offset on, for the log lines of one start attempt.
func readFrom(f *os.File, offset int64) []byte {
	fi, err := f.Stat()
	if err != nil || fi.Size() <= offset {
		return nil
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, fi.Size()-offset))
	return b
}
