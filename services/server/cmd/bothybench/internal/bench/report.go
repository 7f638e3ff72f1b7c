package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// machine is what the figures depend on.
type machine struct {
	Cores             int    `json:"cores"`
	GOMAXPROCS        int    `json:"gomaxprocs"`
	GoVersion         string `json:"go_version"`
	OS                string `json:"os"`
	PostgresVersion   string `json:"postgres_version"`
	Fsync             string `json:"fsync"`
	SynchronousCommit string `json:"synchronous_commit"`
	WalSyncMethod     string `json:"wal_sync_method"`
	Date              string `json:"date"`
	// Kernel is what a round trip between processes costs here (kernelFacts).
	Kernel kernelFacts `json:"kernel"`
}

// settings are the run's flags.
type settings struct {
	Duration       string `json:"duration_per_case"`
	Warmup         string `json:"warmup_per_case"`
	Rate           int    `json:"latency_rate_events_per_second"`
	LatencyWriters int    `json:"latency_writers"`
	// AppendConcurrency is sync.append_concurrency: the appender's admission limit per process.
	// The bare loop has no admission.
	AppendConcurrency int `json:"append_concurrency"`
}

// Target is one acceptance target of an issue (3, 5, 6, 7, 13, 14 or 15) and whether this run
// meets it.
type Target struct {
	Name string `json:"name"`
	// Value is the figure the target is about (for the append targets, the appender's).
	Value float64 `json:"value"`
	// Baseline is the same quotient for the bare loop, where there is one (writer scaling),
	// so a reader can tell the appender's cost from the database's. It is for comparison
	// only: the bare loop has no admission.
	Baseline float64 `json:"baseline,omitempty"`
	Limit    string  `json:"limit"`
	Pass     bool    `json:"pass"`
}

// Write stores md and the report's JSON in dir.
func (r *Report) Write(dir, md string) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	//nolint:gosec // G306: documentation files, readable by everyone on purpose.
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write benchmarks.md: %w", err)
	}
	//nolint:gosec // G306: documentation files, readable by everyone on purpose.
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write benchmarks.json: %w", err)
	}
	return nil
}
