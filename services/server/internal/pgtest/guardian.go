package pgtest

import (
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// guardScript waits until its stdin reaches end of file, which happens when the test binary
// exits however it exits, since only the test binary holds the pipe's write end. It then
// stops a server still running in the directory (immediate shutdown, SIGKILL if that hangs)
// and removes the directory. After a normal cleanup there is nothing left and it just exits.
// The process is identified by its working directory, so a recycled pid is never signalled.
const guardScript = `trap '' INT HUP
while read -r _; do :; done
dir=$1
case $dir in /?*) ;; *) exit 1 ;; esac
if [ -f "$dir/data/postmaster.pid" ]; then
	data=$(readlink -f "$dir/data")
	pid=$(head -n 1 "$dir/data/postmaster.pid")
	ours() { [ -n "$pid" ] && [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$data" ]; }
	if ours; then
		kill -QUIT "$pid" 2>/dev/null
		i=0
		while ours && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		if ours; then kill -KILL "$pid" 2>/dev/null; fi
	fi
fi
rm -rf "$dir"
`

// guardian is the shell process that cleans up after a test binary that died without running
// its deferred functions.
type guardian struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
}

// startGuardian starts a guardian for dir, in its own process group so that a Ctrl-C on the
// terminal does not end it before it has done its work.
func startGuardian(dir string) (*guardian, error) {
	//nolint:gosec,noctx // G204: a constant script and our own directory; no context, as it must outlive them all.
	cmd := exec.Command("/bin/sh", "-c", guardScript, "pgtest-guardian", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("guardian: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("guardian: %w", err)
	}
	return &guardian{cmd: cmd, pipe: pipe}, nil
}

func (g *guardian) pid() int { return g.cmd.Process.Pid }

// release lets the guardian run (after a normal cleanup it finds nothing to do) and reaps it.
func (g *guardian) release() error {
	_ = g.pipe.Close()
	if err := g.cmd.Wait(); err != nil {
		return fmt.Errorf("guardian: %w", err)
	}
	return nil
}
