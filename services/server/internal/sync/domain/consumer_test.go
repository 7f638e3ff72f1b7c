package domain_test

import (
	"errors"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/domain"
)

func TestValidConsumerName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"simple", "main", true},
		{"digits and marks", "e-1.v2_x", true},
		{"starts with digit", "0worker", true},
		{"at the limit", strings.Repeat("a", 8), true},
		{"empty", "", false},
		{"over the limit", strings.Repeat("a", 9), false},
		{"upper case", "Main", false},
		{"starts with a mark", "-main", false},
		{"slash", "a/b", false},
		{"space", "a b", false},
		{"non-ASCII", "café", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.ValidConsumerName(tt.in, 8)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidConsumerName(%q) = %v, want nil", tt.in, err)
				}
				return
			}
			if !errors.Is(err, problem.ErrValidation) {
				t.Fatalf("ValidConsumerName(%q) = %v, want a validation error", tt.in, err)
			}
		})
	}
}
