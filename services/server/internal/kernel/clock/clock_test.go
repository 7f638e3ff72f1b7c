package clock_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"bothy.example.com/server/internal/kernel/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
