package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/instance/domain"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestValuePrecedence(t *testing.T) {
	t.Parallel()
	on, off := true, false
	tests := []struct {
		name            string
		defaultEnabled  bool
		kind, principal *bool
		want            bool
	}{
		{name: "default off, no override", defaultEnabled: false, want: false},
		{name: "default on, no override", defaultEnabled: true, want: true},
		{name: "kind override on beats default off", defaultEnabled: false, kind: &on, want: true},
		{name: "kind override off beats default on", defaultEnabled: true, kind: &off, want: false},
		{name: "principal override on beats default off", defaultEnabled: false, principal: &on, want: true},
		{name: "principal override off beats default on", defaultEnabled: true, principal: &off, want: false},
		{name: "principal on beats kind off", defaultEnabled: false, kind: &off, principal: &on, want: true},
		{name: "principal off beats kind on", defaultEnabled: true, kind: &on, principal: &off, want: false},
		{name: "kind equal to default", defaultEnabled: true, kind: &on, want: true},
		{name: "all agree off", defaultEnabled: false, kind: &off, principal: &off, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.Value(tc.defaultEnabled, tc.kind, tc.principal); got != tc.want {
				t.Fatalf("Value(%v, %v, %v) = %v, want %v", tc.defaultEnabled, tc.kind, tc.principal, got, tc.want)
			}
		})
	}
}

func TestValidateDefinition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key, desc  string
		wantFields []string
	}{
		{name: "valid", key: "threads.summaries", desc: "Summaries of long threads."},
		{name: "valid without description", key: "a"},
		{name: "valid with every allowed character", key: "a0._-z"},
		{name: "valid at 64 characters", key: strings.Repeat("k", 64)},
		{name: "valid description at 500 characters", key: "k", desc: strings.Repeat("é", 500)},
		{name: "empty key", key: "", wantFields: []string{"key"}},
		{name: "key over 64 characters", key: strings.Repeat("k", 65), wantFields: []string{"key"}},
		{name: "key with upper case", key: "Threads", wantFields: []string{"key"}},
		{name: "key starting with a digit", key: "1threads", wantFields: []string{"key"}},
		{name: "key with a space", key: "threads summaries", wantFields: []string{"key"}},
		{name: "key with a colon", key: "kind:agent", wantFields: []string{"key"}},
		{name: "description over 500 characters", key: "k", desc: strings.Repeat("d", 501), wantFields: []string{"description"}},
		{name: "description not UTF-8", key: "k", desc: "\xff", wantFields: []string{"description"}},
		{name: "both invalid", key: "", desc: strings.Repeat("d", 501), wantFields: []string{"key", "description"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := domain.ValidateDefinition(tc.key, tc.desc)
			checkFields(t, err, tc.wantFields)
			var wantKey []string
			if slices.Contains(tc.wantFields, "key") {
				wantKey = []string{"key"}
			}
			checkFields(t, domain.ValidateKey(tc.key), wantKey)
		})
	}
}

// checkFields asserts that err is a validation problem naming exactly want, or nil for none.
func checkFields(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("error = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("error = %v, want a validation problem", err)
	}
	p := problem.From(t.Context(), err)
	var got []string
	for _, f := range p.Errors {
		got = append(got, f.Field)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("fields = %v, want %v", got, want)
	}
}
