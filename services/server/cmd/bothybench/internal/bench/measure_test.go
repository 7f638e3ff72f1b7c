package bench

import "testing"

// TestRotation: every round runs each side once, and over twice as many rounds as there are
// sides each side runs at each position twice.
func TestRotation(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3} {
		testRotation(t, n)
	}
}

func testRotation(t *testing.T, n int) {
	t.Helper()
	places := make([][]int, n) // places[side][position]
	for side := range places {
		places[side] = make([]int, n)
	}
	for round := range 2 * n {
		order := Rotation(round, n)
		seen := map[int]bool{}
		for pos, side := range order {
			if side < 0 || side >= n || seen[side] {
				t.Fatalf("round %d: order %v is not a permutation of the %d sides", round, order, n)
			}
			seen[side] = true
			places[side][pos]++
		}
	}
	for side, at := range places {
		for pos, times := range at {
			if times != 2 {
				t.Errorf("side %d ran at position %d in %d of %d rounds, want 2", side, pos, times, 2*n)
			}
		}
	}
}
