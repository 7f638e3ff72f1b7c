package correlation_test

import (
	"context"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestWithFrom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if got := correlation.From(ctx); got != "" {
		t.Fatalf("From(empty ctx) = %q, want empty", got)
	}
	ctx = correlation.With(ctx, "req-alex-1")
	if got := correlation.From(ctx); got != "req-alex-1" {
		t.Fatalf("From = %q, want req-alex-1", got)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
		want bool
	}{
		{"uuid", "0190a6b2-7c1e-7d3a-9f00-1234567890ab", true},
		{"all allowed chars", "Az09._:-", true},
		{"max length", strings.Repeat("a", correlation.MaxLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", correlation.MaxLen+1), false},
		{"space", "sam 1", false},
		{"newline", "robin\n1", false},
		{"slash", "a/b", false},
		{"non ascii", "caf\u00e9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := correlation.Valid(tt.id); got != tt.want {
				t.Fatalf("Valid(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}
