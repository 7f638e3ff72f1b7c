// Package clock makes the current time injectable, so time-dependent rules
// (retention, expiry, heartbeats) can be tested without sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time. Code that reads the time takes a Clock
// instead of calling time.Now, so tests can substitute a Fake.
type Clock interface {
	// Now returns the current time in UTC.
	Now() time.Time
}

type system struct{}

func (system) Now() time.Time { return time.Now().UTC() }

// System returns the real clock. Times are UTC so stored and logged values
// never depend on the machine's zone.
func System() Clock { return system{} }

// Fake is a Clock that moves only when told to, for deterministic tests. It
// is safe for concurrent use, since code under test often reads the time
// from several goroutines.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake standing at t (converted to UTC, like System).
func NewFake(t time.Time) *Fake {
	return &Fake{now: t.UTC()}
}

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the fake to t (converted to UTC); moving backwards is allowed so
// tests can exercise clock skew.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t.UTC()
}

// Advance moves the fake forward by d and returns the new time.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	return f.now
}
