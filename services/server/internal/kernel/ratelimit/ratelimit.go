// Package ratelimit holds token buckets keyed by a string (a client address,
// an actor), kept in the memory of one process: every process of an instance
// limits on its own, so N processes behind a load balancer admit up to N times
// a limit (ADR 0019). Memory stays bounded: a bucket that has refilled is the
// same as no bucket and is dropped by a periodic sweep, and a limiter never
// holds more than its maximum number of buckets.
package ratelimit

import (
	"fmt"
	"math"
	"sync"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
)

// Config is one limit: Rate tokens a second refill each bucket, up to Burst.
type Config struct {
	// Rate is how many tokens a bucket gains a second (more than 0).
	Rate float64
	// Burst is the bucket's capacity: how many requests a key may make at
	// once after a quiet spell (at least 1).
	Burst int
	// MaxBuckets bounds the keys held at once (http.rate_limit.max_buckets).
	// A new key beyond it first sweeps the full buckets and, when none is
	// full, evicts an arbitrary one, whose key then starts over with a full
	// bucket: memory wins over exactness under a flood of distinct keys.
	MaxBuckets int
	// SweepInterval is how often the buckets that refilled are dropped
	// (http.rate_limit.sweep_interval); the sweep runs inside a call, so an
	// idle limiter costs nothing.
	SweepInterval time.Duration
}

// Validate reports a limit that cannot work.
func (c Config) Validate() error {
	switch {
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("ratelimit: rate %v, want more than 0", c.Rate)
	case c.Burst < 1:
		return fmt.Errorf("ratelimit: burst %d, want at least 1", c.Burst)
	case c.MaxBuckets < 1:
		return fmt.Errorf("ratelimit: max buckets %d, want at least 1", c.MaxBuckets)
	case c.SweepInterval <= 0:
		return fmt.Errorf("ratelimit: sweep interval %v, want more than 0", c.SweepInterval)
	}
	return nil
}

// Limiter is a set of token buckets, one per key, safe for concurrent use.
type Limiter struct {
	cfg   Config
	clock clock.Clock

	mu        sync.Mutex
	buckets   map[string]bucket
	lastSweep time.Time
}

// bucket is a key's tokens as of at; the tokens gained since are computed
// when the bucket is next used.
type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Limiter for cfg reading the time from clk; it panics on a
// cfg that Validate refuses, which is a wiring mistake.
func New(cfg Config, clk clock.Clock) *Limiter {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Limiter{cfg: cfg, clock: clk, buckets: map[string]bucket{}, lastSweep: clk.Now()}
}

// Allow takes one token from key's bucket. When the bucket is empty it takes
// nothing and returns false with how long until a token is back.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.current(key, now)
	if b.tokens < 1 {
		return false, l.wait(b)
	}
	b.tokens--
	l.store(key, b, now)
	return true, 0
}

// Blocked reports whether key's bucket is empty, without taking a token,
// and if so how long until a token is back. A key without a bucket is not
// blocked and gets none.
func (l *Limiter) Blocked(key string) (bool, time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.buckets[key]; !ok {
		return false, 0
	}
	b := l.current(key, now)
	if b.tokens < 1 {
		return true, l.wait(b)
	}
	return false, 0
}

// Take takes one token from key's bucket when it has one: it counts an
// event (a failed authentication) that Blocked then weighs.
func (l *Limiter) Take(key string) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.current(key, now)
	if b.tokens >= 1 {
		b.tokens--
	}
	l.store(key, b, now)
}

// Len returns how many buckets the limiter holds, for tests and the gauge.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// current returns key's bucket refilled up to now; a new key gets a full one.
func (l *Limiter) current(key string, now time.Time) bucket {
	b, ok := l.buckets[key]
	if !ok {
		return bucket{tokens: float64(l.cfg.Burst), at: now}
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = min(float64(l.cfg.Burst), b.tokens+elapsed.Seconds()*l.cfg.Rate)
		b.at = now
	}
	return b
}

// wait is how long bucket b needs to hold one token.
func (l *Limiter) wait(b bucket) time.Duration {
	return time.Duration(math.Ceil((1 - b.tokens) / l.cfg.Rate * float64(time.Second)))
}

// store keeps b for key, sweeping when the interval has passed and making
// room when the limiter is full.
func (l *Limiter) store(key string, b bucket, now time.Time) {
	if now.Sub(l.lastSweep) >= l.cfg.SweepInterval {
		l.sweep(now)
	}
	if _, ok := l.buckets[key]; !ok && len(l.buckets) >= l.cfg.MaxBuckets {
		l.sweep(now)
		if len(l.buckets) >= l.cfg.MaxBuckets {
			for k := range l.buckets {
				delete(l.buckets, k)
				break
			}
		}
	}
	l.buckets[key] = b
}

// sweep drops every bucket that has refilled: a full bucket admits exactly
// what a missing one does, so nothing is forgotten.
func (l *Limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k := range l.buckets {
		if l.current(k, now).tokens >= float64(l.cfg.Burst) {
			delete(l.buckets, k)
		}
	}
}
