package gatewaybench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"time"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Where the latency case's processes wait: beside their busy cores (cpuUse), how long the
// benchmark's goroutines waited to run once runnable (the Go scheduler's latency, which the
// writers pay when the gateway's sessions fill the run queues), and how long the threads of
// each process waited for a CPU (the kernel's run queue, which they pay when the machine is
// busier than its cores).

// schedLatencyMetric is the Go runtime's histogram of the time goroutines spent runnable
// before running.
const schedLatencyMetric = "/sched/latencies:seconds"

// schedSample is a reading of both.
type schedSample struct {
	goCounts    []uint64  // the histogram's counts
	goBuckets   []float64 // its boundaries (len(goCounts)+1)
	serverWait  int64     // ns the benchmark's threads waited on a run queue
	clientsWait int64     // ns the client process's threads did
}

// sampleSched reads the Go scheduler's latency histogram of this process and the run-queue
// waits of this process and the process clientPID.
func sampleSched(clientPID int) schedSample {
	m := []metrics.Sample{{Name: schedLatencyMetric}}
	metrics.Read(m)
	s := schedSample{serverWait: runQueueWait(os.Getpid()), clientsWait: runQueueWait(clientPID)}
	if m[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := m[0].Value.Float64Histogram()
		s.goCounts, s.goBuckets = slices.Clone(h.Counts), h.Buckets
	}
	return s
}

// schedWait is where the processes waited between two samples: the Go scheduler's latency
// in the benchmark's process (p50, p99), and the run-queue wait of each process as the
// threads that waited (ns waited per ns of the window).
type schedWait struct {
	GoP50Ms, GoP99Ms       float64
	ServerWait, ClientWait float64
}

// wait returns the waits between s and later, a window of d.
func (s schedSample) wait(later schedSample, d time.Duration) schedWait {
	var w schedWait
	if d > 0 {
		w.ServerWait = bench.Round2(float64(later.serverWait-s.serverWait) / float64(d))
		w.ClientWait = bench.Round2(float64(later.clientsWait-s.clientsWait) / float64(d))
	}
	if len(s.goCounts) == 0 || len(later.goCounts) != len(s.goCounts) {
		return w
	}
	delta := make([]uint64, len(s.goCounts))
	var total uint64
	for i := range delta {
		delta[i] = later.goCounts[i] - s.goCounts[i]
		total += delta[i]
	}
	w.GoP50Ms = histogramMs(delta, later.goBuckets, total, 50)
	w.GoP99Ms = histogramMs(delta, later.goBuckets, total, 99)
	return w
}

// histogramMs returns the p-th percentile of a runtime/metrics histogram, in milliseconds:
// the upper boundary of the bucket the percentile falls in (its lower one for the last,
// unbounded bucket).
func histogramMs(counts []uint64, buckets []float64, total uint64, p int) float64 {
	if total == 0 {
		return 0
	}
	rank := (uint64(p)*total + 99) / 100 //nolint:gosec // G115: p is a percentage.
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			upper := buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = buckets[i]
			}
			return bench.Round2(upper * 1000)
		}
	}
	return 0
}

// runQueueWait sums the time every thread of process pid has waited on a run queue, in ns
// (the second field of /proc/<pid>/task/<tid>/schedstat); 0 where it cannot be read. Threads
// that ended are not counted.
func runQueueWait(pid int) int64 {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum int64
	for _, t := range tasks {
		raw, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat")) //nolint:gosec // G304: a path under /proc.
		if err != nil {
			continue
		}
		fields := bytes.Fields(raw)
		if len(fields) < 2 {
			continue
		}
		if n, err := strconv.ParseInt(string(fields[1]), 10, 64); err == nil {
			sum += n
		}
	}
	return sum
}
