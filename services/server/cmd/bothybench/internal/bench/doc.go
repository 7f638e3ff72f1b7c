// Package bench is the harness of make bench (ADR 0038): the Case interface every whole-system
// case implements, the runner that wires the main App and runs the selected cases in order
// (Measure), the report built from the cases' sections and written as docs/benchmarks.md and
// docs/benchmarks.json, and what the cases share to measure beside their baselines: the
// throwaway cluster, rotation and percentiles, the CPU meter, the bare append loop and the bare
// LISTEN/NOTIFY round trip, and an HTTP client of the served API.
package bench
