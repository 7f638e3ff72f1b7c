package ids_test

import (
	"bytes"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestNewIsVersion7(t *testing.T) {
	t.Parallel()
	id := ids.New()
	if id.Version() != 7 {
		t.Fatalf("version = %d, want 7", id.Version())
	}
	if id.Variant() != uuid.RFC4122 {
		t.Fatalf("variant = %v, want RFC4122", id.Variant())
	}
}

func TestNewIsMonotonic(t *testing.T) {
	t.Parallel()
	const n = 10000
	prev := ids.New()
	for i := range n {
		next := ids.New()
		if bytes.Compare(prev[:], next[:]) >= 0 {
			t.Fatalf("id %d: %s not after %s", i, next, prev)
		}
		if next.String() <= prev.String() {
			t.Fatalf("id %d: text %s does not sort after %s", i, next, prev)
		}
		prev = next
	}
}
