package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	now = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	pid = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
)

// fields returns the field names of a validation error, failing the test for any other error.
func fields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("err = %v, want a validation error", err)
	}
	p := problem.From(t.Context(), err)
	out := make([]string, len(p.Errors))
	for i, f := range p.Errors {
		out[i] = f.Field
	}
	return out
}

func TestNormalizeHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{in: "alex", want: "alex", ok: true},
		{in: "Alex", want: "alex", ok: true},
		{in: "build-bot", want: "build-bot", ok: true},
		{in: "sam.r_2", want: "sam.r_2", ok: true},
		{in: "ab", want: "ab", ok: true},
		{in: strings.Repeat("r", 32), want: strings.Repeat("r", 32), ok: true},
		{in: "a"},
		{in: strings.Repeat("r", 33)},
		{in: ""},
		{in: "-alex"},
		{in: "alex."},
		{in: "al ex"},
		{in: "al@ex"},
		{in: "\u212aelvin"}, // the Kelvin sign lower-cases to an ASCII k
		{in: "\u0130stanbul"},
		{in: "r\u00e9my"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, ok := domain.NormalizeHandle(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("NormalizeHandle(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestNewPerson(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         identity.PersonInput
		wantFields []string
		want       identity.Principal
	}{
		{
			name: "valid",
			in:   identity.PersonInput{DisplayName: "  Alex  ", Handle: "Alex", Email: "alex@example.com"},
			want: identity.Principal{ID: pid, Kind: actor.KindPerson, DisplayName: "Alex", Handle: "alex", Email: "alex@example.com", CreatedAt: now},
		},
		{name: "all missing", in: identity.PersonInput{}, wantFields: []string{"display_name", "handle", "email"}},
		{name: "blank name", in: identity.PersonInput{DisplayName: "   ", Handle: "alex", Email: "alex@example.com"}, wantFields: []string{"display_name"}},
		{name: "control character", in: identity.PersonInput{DisplayName: "Al\x00ex", Handle: "alex", Email: "alex@example.com"}, wantFields: []string{"display_name"}},
		{name: "name too long", in: identity.PersonInput{DisplayName: strings.Repeat("\u00e9", 101), Handle: "alex", Email: "alex@example.com"}, wantFields: []string{"display_name"}},
		{name: "bad handle", in: identity.PersonInput{DisplayName: "Alex", Handle: "a", Email: "alex@example.com"}, wantFields: []string{"handle"}},
		{name: "email with a name", in: identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: "Alex <alex@example.com>"}, wantFields: []string{"email"}},
		{name: "email without at", in: identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: "alex.example.com"}, wantFields: []string{"email"}},
		{name: "email with space", in: identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: " alex@example.com"}, wantFields: []string{"email"}},
		{name: "email too long", in: identity.PersonInput{DisplayName: "Alex", Handle: "alex", Email: strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + ".example.com"}, wantFields: []string{"email"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewPerson(pid, tc.in, now)
			if f := fields(t, err); !slices.Equal(f, tc.wantFields) {
				t.Fatalf("invalid fields = %v, want %v", f, tc.wantFields)
			}
			if err == nil && !equalPrincipal(got, tc.want) {
				t.Errorf("NewPerson = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         identity.AppInput
		wantFields []string
		wantScopes []string
	}{
		{
			name:       "sorted without duplicates",
			in:         identity.AppInput{DisplayName: "Build bot", Handle: "build-bot", Scopes: []string{"messages:write", "events:subscribe", "messages:write"}},
			wantScopes: []string{"events:subscribe", "messages:write"},
		},
		{
			name:       "every scope",
			in:         identity.AppInput{DisplayName: "Build bot", Handle: "build-bot", Scopes: identity.Scopes()},
			wantScopes: []string{"agents:read", "events:subscribe", "messages:read", "messages:write"},
		},
		{name: "no scopes", in: identity.AppInput{DisplayName: "Build bot", Handle: "build-bot"}, wantFields: []string{"scopes"}},
		{name: "unknown scopes", in: identity.AppInput{DisplayName: "Build bot", Handle: "build-bot", Scopes: []string{"messages:read", "admin", ""}}, wantFields: []string{"scopes[1]", "scopes[2]"}},
		{name: "missing name and handle", in: identity.AppInput{Scopes: []string{"agents:read"}}, wantFields: []string{"display_name", "handle"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewApp(pid, tc.in, now)
			if f := fields(t, err); !slices.Equal(f, tc.wantFields) {
				t.Fatalf("invalid fields = %v, want %v", f, tc.wantFields)
			}
			if err != nil {
				return
			}
			if got.Kind != actor.KindApp || got.Email != "" || !slices.Equal(got.Scopes, tc.wantScopes) {
				t.Errorf("NewApp = %+v, want kind app, no email, scopes %v", got, tc.wantScopes)
			}
		})
	}
}

func TestNewAgent(t *testing.T) {
	t.Parallel()
	got, err := domain.NewAgent(pid, identity.AgentInput{DisplayName: "Robin", Handle: "Robin"}, now)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	want := identity.Principal{ID: pid, Kind: actor.KindAgent, DisplayName: "Robin", Handle: "robin", CreatedAt: now}
	if !equalPrincipal(got, want) {
		t.Errorf("NewAgent = %+v, want %+v", got, want)
	}
	_, err = domain.NewAgent(pid, identity.AgentInput{DisplayName: "Robin", Handle: "r"}, now)
	if f := fields(t, err); !slices.Equal(f, []string{"handle"}) {
		t.Errorf("invalid fields = %v, want [handle]", f)
	}
}

func equalPrincipal(a, b identity.Principal) bool {
	return a.ID == b.ID && a.Kind == b.Kind && a.DisplayName == b.DisplayName && a.Handle == b.Handle &&
		a.Email == b.Email && slices.Equal(a.Scopes, b.Scopes) && a.CreatedAt.Equal(b.CreatedAt) &&
		a.DeactivatedAt.Equal(b.DeactivatedAt)
}
