package postgres_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"bothy.example.com/server/internal/instance/domain"
)

// TestFlagLengthsMatchTheTable: the domain's flag key and description limits are the ones the
// table's own checks allow, so a flag the domain accepts is never refused by the database (and
// architecture/limitcheck.yaml may call them a floor of the schema, not a setting).
func TestFlagLengthsMatchTheTable(t *testing.T) {
	t.Parallel()
	sql, err := os.ReadFile("migrations/0003_create_feature_flags.sql")
	if err != nil {
		t.Fatalf("read migration: %v", err)
	}
	for _, want := range []string{
		fmt.Sprintf("length(key) <= %d", domain.MaxKeyLen),
		fmt.Sprintf("char_length(description) <= %d", domain.MaxDescriptionLen),
	} {
		if !strings.Contains(string(sql), want) {
			t.Errorf("migration 0003 has no check %q", want)
		}
	}
}
