package gatewaybench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// IdleChildEnv is the variable that, when set, makes the benchmark's binary (bothybench, or its test binary) the
// client process of the idle memory case instead: it holds the value, an idleSpec in JSON.
const IdleChildEnv = "BOTHYBENCH_GATEWAY_IDLE_CLIENTS"

// idleChildTimeout bounds the client process's life, should the benchmark die without
// closing its standard input.
const idleChildTimeout = 30 * time.Minute

// idleSpec tells the client process what to open.
type idleSpec struct {
	URL    string   `json:"url"`
	Tokens []string `json:"tokens"`
	N      int      `json:"n"`
}

// serverMemory is what the benchmark's process holds after two garbage collections: the heap
// spans in use (live objects and the free space within their spans) and the goroutine stacks.
type serverMemory struct {
	heap, stack int64
	live        int64 // HeapAlloc: the live objects alone
	goroutines  int
}

func readServerMemory() serverMemory {
	// The second cycle frees what the first one's finalizers and sync.Pools released.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	//nolint:gosec // G115: far below 2^63.
	return serverMemory{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse), live: int64(ms.HeapAlloc), goroutines: runtime.NumGoroutine()}
}

// gatewayIdleCase measures what an idle connection costs the server: the benchmark's binary
// runs again as a child process (idleChildEnv) that opens n connections (Sam's and Robin's in
// turn), sends hello, reads ready and then only reads. The benchmark's process holds the
// server side only, so the difference of its heap and stacks in use (after two garbage
// collections each) between before the child started and when the gateway counts n
// connections and they have settled, divided by n, is the server's memory per connection:
// the hijacked connection and its buffers, the session's goroutines and stacks, its tail
// subscription and everything the request left referenced.
func gatewayIdleCase(ctx context.Context, w *gatewayWorld, n int, settle time.Duration) (r gatewayIdle, err error) {
	exe, err := os.Executable()
	if err != nil {
		return r, fmt.Errorf("gateway idle: the benchmark's binary: %w", err)
	}
	spec, err := json.Marshal(idleSpec{URL: w.ws, Tokens: w.tokens, N: n})
	if err != nil {
		return r, err
	}
	before := readServerMemory()

	cmd := exec.CommandContext(ctx, exe) //nolint:gosec // G204: this very binary, as the client process.
	cmd.Env = append(os.Environ(), IdleChildEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return r, fmt.Errorf("gateway idle: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, fmt.Errorf("gateway idle: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("gateway idle: start the client process: %w", err)
	}
	stopped := false
	stopChild := func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("gateway idle: client process: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	defer func() {
		if cerr := stopChild(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		if want := fmt.Sprintf("ready %d", n); !ok || l != want {
			return r, errors.Join(fmt.Errorf("gateway idle: the client process said %q, want %q", l, want), stopChild())
		}
	case <-ctx.Done():
		return r, ctx.Err()
	}
	if err := w.waitConnections(ctx, n); err != nil {
		return r, err
	}
	// The sessions read their Scope after the ready frame; let them reach the live loop.
	if !bench.SleepCtx(ctx, max(settle, 500*time.Millisecond)) {
		return r, ctx.Err()
	}
	after := readServerMemory()
	if err := stopChild(); err != nil {
		return r, err
	}
	if err := w.waitConnections(ctx, 0); err != nil {
		return r, err
	}
	r = gatewayIdle{
		Connections: n,
		HeapBytes:   after.heap - before.heap, StackBytes: after.stack - before.stack,
		GoroutinesPerConnection: bench.Round2(float64(after.goroutines-before.goroutines) / float64(n)),
	}
	r.BytesPerConnection = bench.Round1(float64(r.HeapBytes+r.StackBytes) / float64(n))
	r.KiBPerConnection = bench.Round2(r.BytesPerConnection / 1024)
	r.HeapKiBPerConnection = bench.Round2(float64(r.HeapBytes) / float64(n) / 1024)
	r.StackKiBPerConnection = bench.Round2(float64(r.StackBytes) / float64(n) / 1024)
	r.LiveHeapKiBPerConnection = bench.Round2(float64(after.live-before.live) / float64(n) / 1024)
	return r, nil
}

// IdleChild is the client process of the idle memory case: it opens the connections of spec,
// says "ready N" on stdout, keeps reading them until stdin ends, then closes them. It
// returns the exit code.
func IdleChild(spec string, stdin io.Reader, stdout, stderr io.Writer) int {
	var s idleSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil || s.N < 1 || s.URL == "" {
		_, _ = fmt.Fprintf(stderr, "bothybench idle clients: bad %s\n", IdleChildEnv)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), idleChildTimeout)
	defer cancel()
	conns, err := dialAll(ctx, s.N, s.URL, s.Tokens)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench idle clients: %v\n", err)
		return 1
	}
	clients := startClients(conns, false, false, time.Now())
	_, _ = fmt.Fprintf(stdout, "ready %d\n", len(conns))
	_, _ = io.Copy(io.Discard, stdin)
	failure := clientFailure(clients)
	closeClients(clients)
	if failure != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench idle clients: %v\n", failure)
		return 1
	}
	return 0
}
