package bench

import (
	"context"
	"slices"
	"time"

	_ "embed" // the baselines' SQL
	"math"
	"strconv"
)

// SleepCtx waits d (nothing when d <= 0) or until ctx ends (false).
func SleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Percentile returns the p-th percentile (nearest rank) of ds.
func Percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[max(rank-1, 0)]
}

// Ms is d in milliseconds, to two decimals, as the report writes latencies.
func Ms(d time.Duration) float64 { return Round2(float64(d.Microseconds()) / 1000) }

// Round1 rounds f to one decimal, as the report writes it.
func Round1(f float64) float64 { return math.Round(f*10) / 10 }

// Round2 rounds f to two decimals, as the report writes it.
func Round2(f float64) float64 { return math.Round(f*100) / 100 }

// Count spells n things, as in "1 space" and "10 spaces".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// Thousands spells n with commas between groups of three digits, as in 1,000,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
