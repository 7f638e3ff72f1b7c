package gatewaybench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// The client process of the latency and fan-out cases: the benchmark's binary run again
// (clientsChildEnv) holds the connections and reads them, so that the benchmark's process
// holds the servers alone (the gateway's App with its writers, or the bare broadcast server)
// and the CPU each side uses can be told apart (/proc/<pid>/stat). The clients publish their
// counts in a clientSlot each, in a file both processes map (MAP_SHARED), so the benchmark
// paces and drains them as if they were its own.

// clientsChildEnv, when set, makes the benchmark's binary (bothybench, or its test binary) the
// client process of the latency and fan-out cases: it holds the value, a clientSpec in JSON,
// and finds the shared slots on file descriptor 3.
const clientsChildEnv = "BOTHYBENCH_GATEWAY_CLIENTS"

// clientSpec tells the client process what to open.
type clientSpec struct {
	URL       string   `json:"url"`
	Tokens    []string `json:"tokens"`
	N         int      `json:"n"`
	Record    bool     `json:"record"`
	KeepFirst bool     `json:"keep_first"`
	// Mark, when set, has every client read frames whole and note whether each event frame
	// holds it (clientResults.Marked).
	Mark string `json:"mark,omitempty"`
}

// clientResults is what the client process sends back when it stops (gob).
type clientResults struct {
	// Failure is why the first connection that ended on its own ended (empty if none did).
	Failure string
	// First is the first event frame of the first connection (with KeepFirst).
	First []byte
	// Seqs and Ats are each connection's arrivals (with Record): seqs, and times on the
	// clock (clock.at).
	Seqs, Ats [][]int64
	// Marked tells, for each arrival of Seqs (with Mark), whether its frame held the mark.
	Marked [][]bool
}

// slotSize is the size of one clientSlot in the shared file.
const slotSize = int(unsafe.Sizeof(clientSlot{}))

// mapSlots maps n slots of f (sized to hold them) shared with the other process.
func mapSlots(f *os.File, n int) ([]byte, []clientSlot, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, n*slotSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map the client slots: %w", err)
	}
	// The mapping is page-aligned and holds no Go pointer; the slots are only ever read and
	// written with atomic operations, by both processes.
	slots := unsafe.Slice((*clientSlot)(unsafe.Pointer(&mem[0])), n) //nolint:gosec // G103: shared memory between the two processes, see above.
	return mem, slots, nil
}

// clientProc is the client process as the benchmark's process sees it.
type clientProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer
	mem    []byte
	slots  []clientSlot
	n      int
	done   bool
}

// startClientProc starts the client process for spec and waits until its connections are
// open (hello sent, ready read) and reading.
func startClientProc(ctx context.Context, spec clientSpec) (_ *clientProc, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("client process: the benchmark's binary: %w", err)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "bothybench-slots-*")
	if err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	_ = os.Remove(f.Name()) // the mappings and the open descriptors keep it
	defer func() { _ = f.Close() }()
	if err := f.Truncate(int64(spec.N * slotSize)); err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	p := &clientProc{n: spec.N}
	if p.mem, p.slots, err = mapSlots(f, spec.N); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = syscall.Munmap(p.mem)
		}
	}()
	p.cmd = exec.CommandContext(ctx, exe) //nolint:gosec // G204: this very binary, as the client process.
	p.cmd.Env = append(os.Environ(), clientsChildEnv+"="+string(raw))
	p.cmd.ExtraFiles = []*os.File{f}
	p.cmd.Stderr = &p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	p.stdout = bufio.NewReaderSize(stdout, 1<<20)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("client process: start: %w", err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := p.stdout.ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case l := <-line:
		if want := fmt.Sprintf("ready %d", spec.N); l != want {
			_ = p.stdin.Close()
			werr := p.cmd.Wait()
			return nil, fmt.Errorf("client process said %q, want %q: %w: %s", l, want, werr, strings.TrimSpace(p.stderr.String()))
		}
	case <-ctx.Done():
		_ = p.stdin.Close()
		_ = p.cmd.Wait()
		return nil, ctx.Err()
	}
	return p, nil
}

// pid is the client process's id.
func (p *clientProc) pid() int { return p.cmd.Process.Pid }

// stop closes the client process's connections (it sees its standard input end), reads its
// results and waits for it. A second call does nothing.
func (p *clientProc) stop() (clientResults, error) {
	var res clientResults
	if p.done {
		return res, nil
	}
	p.done = true
	defer func() { _ = syscall.Munmap(p.mem) }()
	_ = p.stdin.Close()
	decodeErr := gob.NewDecoder(p.stdout).Decode(&res)
	_, _ = io.Copy(io.Discard, p.stdout)
	if err := p.cmd.Wait(); err != nil {
		return res, fmt.Errorf("client process: %w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	if decodeErr != nil {
		return res, fmt.Errorf("client process: its results: %w", decodeErr)
	}
	if res.Failure != "" {
		return res, fmt.Errorf("client process: %s", res.Failure)
	}
	return res, nil
}

// clientsChild is the client process: it opens the connections of spec, with their slots on
// file descriptor 3, says "ready N" on stdout, reads them until stdin ends, closes them and
// writes its clientResults (gob) on stdout. It returns the exit code.
func clientsChild(spec string, slotFile *os.File, stdin io.Reader, stdout, stderr io.Writer) int {
	var s clientSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil || s.N < 1 || s.URL == "" || slotFile == nil {
		_, _ = fmt.Fprintf(stderr, "bothybench clients: bad %s or no slot file\n", clientsChildEnv)
		return 2
	}
	mem, slots, err := mapSlots(slotFile, s.N)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench clients: %v\n", err)
		return 1
	}
	defer func() { _ = syscall.Munmap(mem) }()
	ctx, cancel := context.WithTimeout(context.Background(), idleChildTimeout)
	defer cancel()
	conns, err := dialAll(ctx, s.N, s.URL, s.Tokens)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench clients: %v\n", err)
		return 1
	}
	var mark []byte
	if s.Mark != "" {
		mark = []byte(s.Mark)
	}
	clients := startClientsIn(conns, slots, s.Record, s.KeepFirst, mark, newClock(time.Now()))
	_, _ = fmt.Fprintf(stdout, "ready %d\n", len(conns))
	stopProfile, err := childCommands(stdin)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench clients: %v\n", err)
	}
	stopProfile()
	var res clientResults
	if failure := clientFailure(clients); failure != nil {
		res.Failure = failure.Error()
	}
	closeClients(clients)
	res.First = clients[0].first
	if s.Record {
		res.Seqs, res.Ats = make([][]int64, len(clients)), make([][]int64, len(clients))
		if mark != nil {
			res.Marked = make([][]bool, len(clients))
		}
		for i, c := range clients {
			res.Seqs[i], res.Ats[i] = make([]int64, len(c.arrivals)), make([]int64, len(c.arrivals))
			if mark != nil {
				res.Marked[i] = make([]bool, len(c.arrivals))
			}
			for j, a := range c.arrivals {
				res.Seqs[i][j], res.Ats[i][j] = a.seq, a.at
				if mark != nil {
					res.Marked[i][j] = a.marked
				}
			}
		}
	}
	w := bufio.NewWriterSize(stdout, 1<<20)
	if err := errors.Join(gob.NewEncoder(w).Encode(&res), w.Flush()); err != nil {
		_, _ = fmt.Fprintf(stderr, "bothybench clients: write the results: %v\n", err)
		return 1
	}
	return 0
}

// childCommands reads the client process's standard input until it ends: a line
// "cpuprofile PATH" starts a CPU profile into PATH (the benchmark's -cases gateway with
// gatewayProfileEnv set), which the function returned stops.
func childCommands(stdin io.Reader) (func(), error) {
	stop := func() {}
	s := bufio.NewScanner(stdin)
	for s.Scan() {
		path, ok := strings.CutPrefix(s.Text(), "cpuprofile ")
		if !ok {
			continue
		}
		f, err := os.Create(path) //nolint:gosec // G304: a path the benchmark chose.
		if err != nil {
			return stop, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return stop, err
		}
		stop = func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}
	}
	return stop, s.Err()
}

// startProfile has the client process start a CPU profile into path.
func (p *clientProc) startProfile(path string) error {
	if _, err := fmt.Fprintf(p.stdin, "cpuprofile %s\n", path); err != nil {
		return fmt.Errorf("client process: start a profile: %w", err)
	}
	return nil
}

// ClientsChildMain runs clientsChild for the benchmark's binary (and its test binary) when
// clientsChildEnv is set; ok is false when it is not.
func ClientsChildMain() (code int, ok bool) {
	spec, ok := os.LookupEnv(clientsChildEnv)
	if !ok {
		return 0, false
	}
	return clientsChild(spec, os.NewFile(3, "slots"), os.Stdin, os.Stdout, os.Stderr), true
}

// cpuUse is how many cores were busy on average over a window: the machine's (/proc/stat),
// the benchmark's process's (the servers: the gateway's App and its writers, or the bare
// broadcast server) and the client process's (/proc/<pid>/stat).
type cpuUse struct {
	All, Server, Clients float64
}

// cpuSample is a reading of the CPU times cpuUse compares, in clock ticks.
type cpuSample struct {
	machine         cpuTimes
	server, clients int64
}

// sampleCPU reads the CPU times of the machine, this process and the process clientPID.
func sampleCPU(clientPID int) cpuSample {
	return cpuSample{machine: readCPUTimes(), server: procTicks(os.Getpid()), clients: procTicks(clientPID)}
}

// use returns the busy cores between s and later; zeros where /proc could not be read.
func (s cpuSample) use(later cpuSample) cpuUse {
	total := later.machine.total - s.machine.total
	if total <= 0 {
		return cpuUse{}
	}
	share := func(d int64) float64 { return bench.Round2(float64(d) / float64(total) * float64(runtime.NumCPU())) }
	return cpuUse{All: s.machine.busyCores(later.machine), Server: share(later.server - s.server), Clients: share(later.clients - s.clients)}
}

// procTicks returns the user and system CPU time of process pid (all its threads) in clock
// ticks, the unit of /proc/stat; 0 when it cannot be read.
func procTicks(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	fields := bench.ProcStatFields(raw)
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0
	}
	var t int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0
		}
		t += n
	}
	return t
}
