package domain

// Budget bounds the creation attempts of one pass (--max-items). Only attempts use it,
// successful or failed; skipping a record whose natural key exists costs nothing, since a skip
// is not the work the bound exists to limit. The zero value has no bound.
type Budget struct {
	max, used int
}

// NewBudget returns a budget of limit attempts; limit <= 0 means no bound.
func NewBudget(limit int) Budget {
	return Budget{max: limit}
}

// Take uses one attempt and reports whether there was one to use.
func (b *Budget) Take() bool {
	if b.Exhausted() {
		return false
	}
	b.used++
	return true
}

// Refund gives back the attempt of a record that turned out to exist already (a natural key
// taken between the lookup and the write), so that it costs nothing after all.
func (b *Budget) Refund() {
	if b.used > 0 {
		b.used--
	}
}

// Exhausted reports whether no attempt is left.
func (b Budget) Exhausted() bool {
	return b.max > 0 && b.used >= b.max
}

// Used counts the attempts made.
func (b Budget) Used() int { return b.used }

// Max is the bound; 0 for none.
func (b Budget) Max() int {
	if b.max < 0 {
		return 0
	}
	return b.max
}
