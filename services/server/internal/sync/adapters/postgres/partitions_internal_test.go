package postgres

import (
	"errors"
	"slices"
	"testing"
	"time"

	"bothy.example.com/server/internal/sync"
)

func TestPartitionConfigValidate(t *testing.T) {
	t.Parallel()
	good := PartitionConfig{Interval: 24 * time.Hour, Ahead: 3, Retention: 2160 * time.Hour, LockTimeout: time.Second}
	tests := []struct {
		name   string
		change func(*PartitionConfig)
		ok     bool
	}{
		{name: "defaults", change: func(*PartitionConfig) {}, ok: true},
		{name: "one minute", change: func(c *PartitionConfig) { c.Interval = time.Minute }, ok: true},
		{name: "under a minute", change: func(c *PartitionConfig) { c.Interval = 59 * time.Second }},
		{name: "not whole seconds", change: func(c *PartitionConfig) { c.Interval = time.Hour + time.Millisecond }},
		{name: "nothing ahead", change: func(c *PartitionConfig) { c.Ahead = 0 }},
		{name: "no retention", change: func(c *PartitionConfig) { c.Retention = 0 }},
		{name: "no lock timeout", change: func(c *PartitionConfig) { c.LockTimeout = 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := good
			tc.change(&c)
			err := c.Validate()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidPartitionConfig)) {
				t.Errorf("Validate = %v, want ok %v", err, tc.ok)
			}
			if _, err := NewPartitions(nil, c); tc.ok != (err == nil) {
				t.Errorf("NewPartitions = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestSlotStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		t        time.Time
		interval time.Duration
		want     time.Time
	}{
		{name: "day", t: time.Date(2026, 11, 30, 13, 45, 0, 0, time.UTC), interval: 24 * time.Hour, want: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{name: "on the boundary", t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), interval: 24 * time.Hour, want: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{name: "another zone is the same instant", t: time.Date(2026, 11, 30, 1, 30, 0, 0, time.FixedZone("east", 2*3600)), interval: 24 * time.Hour, want: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{name: "week counts from the epoch (a Thursday)", t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), interval: 7 * 24 * time.Hour, want: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)},
		{name: "before the epoch", t: time.Date(1969, 12, 31, 23, 30, 0, 0, time.UTC), interval: time.Hour, want: time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := slotStart(tc.t, tc.interval)
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("slotStart = %v, want %v in UTC", got, tc.want)
			}
		})
	}
}

func TestUncovered(t *testing.T) {
	t.Parallel()
	h := func(n int) time.Time {
		return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Hour)
	}
	have := func(pairs ...int) []sync.PartitionRange {
		var out []sync.PartitionRange
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, sync.PartitionRange{From: h(pairs[i]), To: h(pairs[i+1])})
		}
		return out
	}
	spans := func(pairs ...int) []span {
		var out []span
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, span{h(pairs[i]), h(pairs[i+1])})
		}
		return out
	}
	tests := []struct {
		name string
		want []span
		have []sync.PartitionRange
		out  []span
	}{
		{name: "nothing exists", want: spans(0, 1, 1, 2), out: spans(0, 1, 1, 2)},
		{name: "all covered", want: spans(0, 1, 1, 2), have: have(0, 2)},
		{name: "duplicates merge", want: spans(1, 2, 0, 1, 1, 2), out: spans(0, 1, 1, 2)},
		{name: "overlapping wants merge", want: spans(0, 3, 2, 5), out: spans(0, 5)},
		{name: "hole in the middle", want: spans(0, 24), have: have(10, 11, 11, 12), out: spans(0, 10, 12, 24)},
		{name: "overlap at both ends", want: spans(5, 10), have: have(0, 6, 9, 20), out: spans(6, 9)},
		{name: "unrelated ranges", want: spans(5, 6), have: have(0, 1, 30, 31), out: spans(5, 6)},
		{name: "disjoint wants", want: spans(0, 1, 5, 6), have: have(0, 1), out: spans(5, 6)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := uncovered(tc.want, tc.have)
			if !slices.Equal(got, tc.out) {
				t.Errorf("uncovered = %v, want %v", got, tc.out)
			}
		})
	}
}
