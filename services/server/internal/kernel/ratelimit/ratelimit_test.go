package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/ratelimit"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func config(rate float64, burst int) ratelimit.Config {
	return ratelimit.Config{Rate: rate, Burst: burst, MaxBuckets: 100, SweepInterval: time.Minute}
}

// step is one call of a scripted run: advance the clock, then Allow (or
// Take, or Blocked) on key, and what it must answer.
type step struct {
	advance time.Duration
	op      string // allow, take, blocked
	key     string
	want    bool          // allowed (allow) or blocked (blocked)
	wait    time.Duration // the retry-after when refused or blocked
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	allow := func(key string) step { return step{op: "allow", key: key, want: true} }
	refuse := func(key string, wait time.Duration) step {
		return step{op: "allow", key: key, want: false, wait: wait}
	}
	tests := []struct {
		name  string
		cfg   ratelimit.Config
		steps []step
	}{
		{"a burst then refusal with the time to the next token", config(2, 3), []step{
			allow("a"), allow("a"), allow("a"), refuse("a", 500*time.Millisecond),
		}},
		{"keys are independent", config(1, 1), []step{
			allow("a"), refuse("a", time.Second), allow("b"), refuse("b", time.Second),
		}},
		{"tokens come back at the rate", config(10, 2), []step{
			allow("a"), allow("a"), refuse("a", 100*time.Millisecond),
			{advance: 50 * time.Millisecond, op: "allow", key: "a", want: false, wait: 50 * time.Millisecond},
			{advance: 50 * time.Millisecond, op: "allow", key: "a", want: true},
			refuse("a", 100*time.Millisecond),
		}},
		{"refill stops at the burst", config(1, 2), []step{
			allow("a"),
			{advance: time.Hour, op: "allow", key: "a", want: true},
			allow("a"), refuse("a", time.Second),
		}},
		{"a steady client below the rate is never refused", config(10, 1), []step{
			allow("a"),
			{advance: 100 * time.Millisecond, op: "allow", key: "a", want: true},
			{advance: 100 * time.Millisecond, op: "allow", key: "a", want: true},
			{advance: 150 * time.Millisecond, op: "allow", key: "a", want: true},
		}},
		{"failures: blocked only once the burst is spent", config(0.5, 2), []step{
			{op: "blocked", key: "ip", want: false},
			{op: "take", key: "ip"},
			{op: "blocked", key: "ip", want: false},
			{op: "take", key: "ip"},
			{op: "blocked", key: "ip", want: true, wait: 2 * time.Second},
			{op: "take", key: "ip"}, // an empty bucket stays empty, not negative
			{advance: time.Second, op: "blocked", key: "ip", want: true, wait: time.Second},
			{advance: time.Second, op: "blocked", key: "ip", want: false},
			{op: "blocked", key: "other", want: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(epoch)
			l := ratelimit.New(tc.cfg, clk)
			for i, s := range tc.steps {
				clk.Advance(s.advance)
				switch s.op {
				case "allow":
					ok, wait := l.Allow(s.key)
					if ok != s.want || wait != s.wait {
						t.Fatalf("step %d: Allow(%q) = %v, %v; want %v, %v", i, s.key, ok, wait, s.want, s.wait)
					}
				case "blocked":
					blocked, wait := l.Blocked(s.key)
					if blocked != s.want || wait != s.wait {
						t.Fatalf("step %d: Blocked(%q) = %v, %v; want %v, %v", i, s.key, blocked, wait, s.want, s.wait)
					}
				case "take":
					l.Take(s.key)
				}
			}
		})
	}
}

// TestLimiterMemoryIsBounded: refilled buckets are swept after the interval,
// and a flood of distinct keys never holds more than MaxBuckets.
func TestLimiterMemoryIsBounded(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	l := ratelimit.New(ratelimit.Config{Rate: 1, Burst: 5, MaxBuckets: 10, SweepInterval: time.Minute}, clk)
	for i := range 1000 {
		l.Allow(fmt.Sprint("flood-", i))
		if n := l.Len(); n > 10 {
			t.Fatalf("after %d keys the limiter holds %d buckets, want at most 10", i+1, n)
		}
	}
	// Still refusing a spent key: the spent bucket is not swept while it is not full.
	clk.Advance(time.Minute)
	for range 5 {
		l.Allow("spent")
	}
	if ok, _ := l.Allow("spent"); ok {
		t.Fatal("a spent key was allowed")
	}
	if blocked, _ := l.Blocked("spent"); !blocked {
		t.Fatal("a spent key is not blocked")
	}
	// Once every bucket refilled, the next call after the interval sweeps them all.
	clk.Advance(time.Minute)
	l.Allow("late")
	if n := l.Len(); n != 1 {
		t.Fatalf("after the sweep the limiter holds %d buckets, want 1 (the new key)", n)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	good := config(1, 1)
	bad := []ratelimit.Config{
		{Rate: 0, Burst: 1, MaxBuckets: 1, SweepInterval: time.Second},
		{Rate: 1, Burst: 0, MaxBuckets: 1, SweepInterval: time.Second},
		{Rate: 1, Burst: 1, MaxBuckets: 0, SweepInterval: time.Second},
		{Rate: 1, Burst: 1, MaxBuckets: 1, SweepInterval: 0},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v", good, err)
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
}
