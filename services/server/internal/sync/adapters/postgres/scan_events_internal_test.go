package postgres

import "testing"

// TestChunksCopyAndReuse: copies are equal to their source, capped at their own bytes, and
// independent of later copies; a value larger than a chunk gets a chunk of its own; after
// reset the chunks are handed out again, the small one too when it fits.
func TestChunksCopyAndReuse(t *testing.T) {
	t.Parallel()
	var c chunks
	a := c.copyOf([]byte("Alex"))
	b := c.copyOf([]byte("Sam"))
	if string(a) != "Alex" || string(b) != "Sam" || cap(a) != len(a) {
		t.Fatalf("copies %q %q (cap %d)", a, b, cap(a))
	}
	_ = append(a, '!') // must not reach b
	if string(b) != "Sam" {
		t.Fatalf("appending to one copy changed the next: %q", b)
	}
	big := make([]byte, chunkSize+1)
	big[chunkSize] = 'R'
	if got := c.copyOf(big); len(got) != len(big) || got[chunkSize] != 'R' {
		t.Fatalf("a large copy has %d bytes", len(got))
	}
	if len(c.used) != 2 {
		t.Fatalf("%d chunks used, want 2 (a shared one and the large one)", len(c.used))
	}
	first := &c.used[0][:1][0]
	c.reset()
	if len(c.used) != 0 || len(c.spare) != 2 {
		t.Fatalf("after reset: %d used, %d spare", len(c.used), len(c.spare))
	}
	again := c.copyOf([]byte("Robin"))
	if string(again) != "Robin" || len(c.spare) != 1 {
		t.Fatalf("copy after reset %q with %d spare chunks left", again, len(c.spare))
	}
	// A second reset brings back both; two values of a chunk's size each fill the large one
	// (handed out first, last in) and then the first one again.
	c.reset()
	var reused bool
	for range 2 {
		got := c.copyOf(make([]byte, chunkSize))
		reused = reused || &got[0] == first
	}
	if !reused || len(c.spare) != 0 {
		t.Fatalf("the first chunk was not handed out again (%d spare)", len(c.spare))
	}
}
