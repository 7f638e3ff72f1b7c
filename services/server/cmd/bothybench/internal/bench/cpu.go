package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CPUMeter reads the CPU time used so far by the benchmark's process and by the PostgreSQL
// cluster (the postmaster and every process it started), so a case can tell, beside a side's
// latency, how much CPU one answer costs on each end. On a machine of two cores shared by the
// client, the server and PostgreSQL, a side that burns more CPU slows the others down, which
// the latencies alone do not show. It reads /proc (Linux); newCPUMeter fails where there is none.
type CPUMeter struct {
	proc       string // the proc file system's root, /proc but for tests
	postmaster int
}

// NewCPUMeter finds the cluster's postmaster behind pool: the parent of a backend of pool.
func NewCPUMeter(ctx context.Context, pool *pgxpool.Pool) (CPUMeter, error) {
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return CPUMeter{}, fmt.Errorf("cpu meter: backend pid: %w", err)
	}
	m := CPUMeter{proc: "/proc"}
	postmaster, err := m.parent(backend)
	if err != nil {
		return CPUMeter{}, fmt.Errorf("cpu meter: %w", err)
	}
	m.postmaster = postmaster
	if _, err := m.Read(); err != nil {
		return CPUMeter{}, err
	}
	return m, nil
}

// CPUSpent is what one read of a CPUMeter gives.
type CPUSpent struct {
	process  time.Duration // the benchmark's process, user and system
	postgres time.Duration // the cluster's processes, on CPU
}

// Read returns the CPU times used so far. A process of the cluster that ended since an
// earlier read takes its time with it: read around loops on a pool's long-lived connections.
func (m CPUMeter) Read() (CPUSpent, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUSpent{}, fmt.Errorf("cpu meter: getrusage: %w", err)
	}
	t := CPUSpent{process: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	entries, err := os.ReadDir(m.proc)
	if err != nil {
		return CPUSpent{}, fmt.Errorf("cpu meter: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		parent, err := m.parent(pid)
		if err != nil || (pid != m.postmaster && parent != m.postmaster) {
			continue // gone meanwhile, or not the cluster's
		}
		onCPU, err := m.onCPU(pid)
		if err != nil {
			continue
		}
		t.postgres += onCPU
	}
	return t, nil
}

// parent reads the parent pid of pid from /proc/<pid>/stat.
func (m CPUMeter) parent(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(m.proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	return parsePPID(b)
}

// parsePPID reads the parent pid from a /proc/<pid>/stat line (field 4).
func parsePPID(b []byte) (int, error) {
	f := ProcStatFields(b)
	if len(f) < 2 {
		return 0, errors.New("stat: too few fields")
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, fmt.Errorf("stat: ppid: %w", err)
	}
	return ppid, nil
}

// ProcStatFields returns the fields of a /proc/<pid>/stat line from field 3 (state) on: the
// command before them (field 2) is in parentheses and may itself hold spaces and
// parentheses, so they start after its last ")". Nil for a line without one.
func ProcStatFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// onCPU reads the nanoseconds a process has run from /proc/<pid>/schedstat (its first
// field); PostgreSQL's processes have one thread each.
func (m CPUMeter) onCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(m.proc, strconv.Itoa(pid), "schedstat"))
	if err != nil {
		return 0, err
	}
	return parseSchedstat(b)
}

// parseSchedstat reads the first field of a schedstat line (time on CPU, ns).
func parseSchedstat(b []byte) (time.Duration, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("schedstat: empty")
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat: %w", err)
	}
	return time.Duration(ns), nil
}

// SideCPU is one side's CPU per answer, in milliseconds: the benchmark's process (for a
// figure served over HTTP, its client and its server together) and PostgreSQL.
type SideCPU struct {
	ProcessMs  float64 `json:"process_ms"`
	PostgresMs float64 `json:"postgres_ms"`
}

// CPUTally sums the CPU of the loops of one side.
type CPUTally struct {
	process, postgres time.Duration
	answers           int
}

// Add counts the CPU between two reads around a loop of answers.
func (t *CPUTally) Add(before, after CPUSpent, answers int) {
	t.process += after.process - before.process
	t.postgres += after.postgres - before.postgres
	t.answers += answers
}

// PerAnswer is the tally's CPU per answer.
func (t CPUTally) PerAnswer() SideCPU {
	if t.answers == 0 {
		return SideCPU{}
	}
	n := time.Duration(t.answers)
	return SideCPU{ProcessMs: ms3(t.process / n), PostgresMs: ms3(t.postgres / n)}
}

// ms3 is d in milliseconds to three places: a side's CPU per answer is a fraction of one.
func ms3(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
