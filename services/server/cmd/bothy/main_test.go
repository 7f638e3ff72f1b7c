package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m, wire.Migrations()...)
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the bothy binary, compiled once per test binary.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary returns the path of a freshly built bothy.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "bothy-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.path = filepath.Join(dir, "bothy")
		goBin, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", built.path, ".") //nolint:gosec // the go command from PATH, fixed arguments.
		out, err := cmd.CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("build bothy: %v", built.err)
	}
	return built.path
}

// tempDir returns a fresh directory under /tmp that the postgres account can
// traverse (pglocal runs the embedded default as that user), removed when
// the test ends.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "bothy-test-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	// The embedded default's server runs as the postgres account, which must traverse it.
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // a directory, traversable on purpose.
		t.Fatalf("chmod %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// process is a running bothy whose stderr (JSON log lines) is collected.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's result, valid once exited is closed

	mu     sync.Mutex
	lines  []string
	stdout bytes.Buffer
	addr   chan string
}

// lockedWriter appends to a process's stdout under its lock.
type lockedWriter struct{ p *process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stdout.Write(b)
}

// output returns what the process wrote on stdout so far.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// environ is the child's environment: PATH (for the PostgreSQL binaries)
// and the given BOTHY_ variables, nothing else from the test process.
func environ(vars ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, vars...)
}

// start runs bothy with args and env and collects its log lines.
func start(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	// Not CommandContext: the process must get SIGINT or SIGTERM, never a kill
	// from a cancelled context; the cleanup below kills it only if it is left over.
	cmd := exec.CommandContext(context.Background(), binary(t), args...) //nolint:gosec // the binary this test built.
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("stderr pipe: %v", err)
	}
	p := &process{t: t, cmd: cmd, exited: make(chan struct{}), addr: make(chan string, 1)}
	cmd.Stdout = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bothy: %v", err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving http" && rec.Addr != "" {
				select {
				case p.addr <- rec.Addr:
				default:
				}
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to the end first.
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
			t.Errorf("bothy still ran at the end of the test; killed it. Log:\n%s", p.log())
		}
	})
	return p
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// baseURL waits for the "serving http" log line and returns the server's URL.
func (p *process) baseURL(within time.Duration) string {
	p.t.Helper()
	select {
	case addr := <-p.addr:
		return "http://" + addr
	case <-p.exited:
		p.t.Fatalf("bothy exited (%v) before serving. Log:\n%s", p.err, p.log())
	case <-time.After(within):
		p.t.Fatalf("bothy did not serve within %v. Log:\n%s", within, p.log())
	}
	return ""
}

// waitReady polls /readyz until it answers 200.
func (p *process) waitReady(base string, within time.Duration) {
	p.t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, err := http.NewRequestWithContext(p.t.Context(), http.MethodGet, base+"/readyz", nil)
		if err != nil {
			p.t.Fatalf("new request: %v", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("/readyz not 200 within %v (last: %s). Log:\n%s", within, last, p.log())
		}
		select {
		case <-tick.C:
		case <-p.exited:
			p.t.Fatalf("bothy exited (%v) before it was ready. Log:\n%s", p.err, p.log())
		}
	}
}

// waitLog waits until a log line contains s.
func (p *process) waitLog(s string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(p.log(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no log line with %s within %v. Log:\n%s", s, within, p.log())
		}
		select {
		case <-tick.C:
		case <-p.exited:
			if !strings.Contains(p.log(), s) {
				p.t.Fatalf("bothy exited (%v) before logging %s. Log:\n%s", p.err, s, p.log())
			}
		}
	}
}

// stop sends sig and waits for the exit; it fails unless bothy exits
// cleanly (code 0) within the time given.
func (p *process) stop(sig syscall.Signal, within time.Duration) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-p.exited:
	case <-time.After(within):
		p.t.Fatalf("bothy did not exit within %v of %v. Log:\n%s", within, sig, p.log())
	}
	if p.err != nil {
		p.t.Fatalf("bothy exited with %v after %v, want 0. Log:\n%s", p.err, sig, p.log())
	}
}

// runOut runs bothy to completion and returns its stdout and exit code.
func runOut(t *testing.T, env []string, args ...string) (stdout string, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...) //nolint:gosec // the binary this test built.
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run bothy %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}
