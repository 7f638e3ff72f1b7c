package clock_test

import (
	"sync"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestSystemIsUTCAndCurrent(t *testing.T) {
	t.Parallel()
	before := time.Now()
	got := clock.System().Now()
	after := time.Now()
	if got.Location() != time.UTC {
		t.Fatalf("location = %v, want UTC", got.Location())
	}
	if got.Before(before.Add(-time.Second)) || got.After(after.Add(time.Second)) {
		t.Fatalf("Now = %v, not between %v and %v", got, before, after)
	}
}

func TestFake(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("UTC+2", 2*60*60)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, zone)
	f := clock.NewFake(start)
	var c clock.Clock = f
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now = %v, want %v in UTC", got, start)
	}
	if got := f.Advance(90 * time.Second); !got.Equal(start.Add(90 * time.Second)) {
		t.Fatalf("Advance returned %v", got)
	}
	if got := f.Now(); !got.Equal(start.Add(90 * time.Second)) {
		t.Fatalf("Now after Advance = %v", got)
	}
	earlier := start.Add(-time.Hour)
	f.Set(earlier)
	if got := f.Now(); !got.Equal(earlier) || got.Location() != time.UTC {
		t.Fatalf("Now after Set = %v, want %v in UTC", got, earlier)
	}
}

func TestFakeConcurrent(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	const workers, steps = 8, 100
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range steps {
				f.Advance(time.Millisecond)
				_ = f.Now()
			}
		})
	}
	wg.Wait()
	want := start.Add(workers * steps * time.Millisecond)
	if got := f.Now(); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}

// TestPrecision holds both clocks to what PostgreSQL stores: a time with
// nanoseconds would come back from the database different from the one a
// create response or an event payload carried.
func TestPrecision(t *testing.T) {
	t.Parallel()
	exact := time.Date(2026, 12, 1, 9, 30, 35, 237283497, time.UTC)
	want := time.Date(2026, 12, 1, 9, 30, 35, 237283000, time.UTC)
	f := clock.NewFake(exact)
	if got := f.Now(); !got.Equal(want) {
		t.Fatalf("Fake.Now = %v, want %v", got, want)
	}
	f.Set(exact)
	if got := f.Now(); !got.Equal(want) {
		t.Fatalf("Fake.Now after Set = %v, want %v", got, want)
	}
	if got := f.Advance(time.Nanosecond); !got.Equal(want) {
		t.Fatalf("Advance(1ns) = %v, want %v", got, want)
	}
	// Small steps add up: the fake keeps the exact instant.
	if got := f.Advance(502 * time.Nanosecond); !got.Equal(want.Add(time.Microsecond)) {
		t.Fatalf("Advance(502ns) = %v, want %v", got, want.Add(time.Microsecond))
	}
	for range 100 {
		if got := clock.System().Now(); got.Nanosecond()%int(clock.Precision) != 0 {
			t.Fatalf("System().Now() = %v has digits below %v", got, clock.Precision)
		}
	}
}
