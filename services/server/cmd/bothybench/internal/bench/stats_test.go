package bench

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := Percentile(ds, 50); p != 50*time.Millisecond {
		t.Fatalf("p50 = %v", p)
	}
	if p := Percentile(ds, 99); p != 99*time.Millisecond {
		t.Fatalf("p99 = %v", p)
	}
	if p := Percentile(ds[:1], 99); p != 100*time.Millisecond {
		t.Fatalf("p99 of one = %v", p)
	}
}

func TestThousandsAndCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 100_000_000: "100,000,000", -1234: "-1,234"} {
		if got := Thousands(n); got != want {
			t.Fatalf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if Count(1, "space") != "1 space" || Count(10, "space") != "10 spaces" {
		t.Fatal("count does not spell one and many")
	}
}
