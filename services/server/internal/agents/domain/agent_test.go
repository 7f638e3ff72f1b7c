package domain_test

import (
	"strings"
	"testing"

	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestDescription(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		invalid        bool
	}{
		{name: "empty", in: "", want: ""},
		{name: "plain", in: "Summarises long threads.", want: "Summarises long threads."},
		{name: "outer space trimmed", in: "  Summarises\tlong\nthreads. \n", want: "Summarises\tlong\nthreads."},
		{name: "only space", in: " \t\n", want: ""},
		{name: "500 characters", in: strings.Repeat("é", 500), want: strings.Repeat("é", 500)},
		{name: "500 after trimming", in: " " + strings.Repeat("d", 500) + " ", want: strings.Repeat("d", 500)},
		{name: "501 characters", in: strings.Repeat("d", 501), invalid: true},
		{name: "control character", in: "bell\a", invalid: true},
		{name: "carriage return inside", in: "a\rb", invalid: true},
		{name: "not UTF-8", in: "\xff", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, problem := domain.Description(tc.in)
			if (problem != "") != tc.invalid {
				t.Fatalf("Description(%q) problem = %q, want invalid %v", tc.in, problem, tc.invalid)
			}
			if !tc.invalid && got != tc.want {
				t.Fatalf("Description(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
