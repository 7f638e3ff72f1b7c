// Package clock makes the current time injectable, so time-dependent rules
// (retention, expiry, heartbeats) can be tested without sleeping.
//
// Every time it tells is truncated to Precision, what PostgreSQL's timestamptz
// stores: a time is cut once, where it is taken, so the create response, the
// event payload and every later read of an object carry the same instant and
// the same string (docs/DECISIONS.md, timestamp precision).
package clock

import (
	"sync"
	"time"
)

// Precision is the resolution of every time a Clock tells: microseconds, the
// resolution of PostgreSQL's timestamptz.
const Precision = time.Microsecond

// Clock tells the current time. Code that reads the time takes a Clock
// instead of calling time.Now, so tests can substitute a Fake.
type Clock interface {
	// Now returns the current time in UTC, truncated to Precision.
	Now() time.Time
}

type system struct{}

func (system) Now() time.Time { return time.Now().UTC().Truncate(Precision) }

// System returns the real clock. Times are UTC so stored and logged values
// never depend on the machine's zone, and truncated to Precision so a value
// read back from the database equals the one written.
func System() Clock { return system{} }

// Fake is a Clock that moves only when told to, for deterministic tests. It
// is safe for concurrent use, since code under test often reads the time
// from several goroutines. Like System it tells times truncated to
// Precision; it keeps the exact instant it was set or advanced to, so many
// small Advance steps add up.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake standing at t (converted to UTC, like System).
func NewFake(t time.Time) *Fake {
	return &Fake{now: t.UTC()}
}

// Now returns the fake's current time, truncated to Precision.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now.Truncate(Precision)
}

// Set moves the fake to t (converted to UTC); moving backwards is allowed so
// tests can exercise clock skew.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t.UTC()
}

// Advance moves the fake forward by d and returns the new time, truncated
// to Precision like Now.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	return f.now.Truncate(Precision)
}
