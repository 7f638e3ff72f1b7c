package instance_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

var samID = uuid.MustParse("0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77")

func TestParseFlagTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    instance.FlagTarget
		invalid bool
	}{
		{in: "kind:person", want: instance.KindTarget(actor.KindPerson)},
		{in: "kind:agent", want: instance.KindTarget(actor.KindAgent)},
		{in: "kind:app", want: instance.KindTarget(actor.KindApp)},
		{in: "principal:0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77", want: instance.PrincipalTarget(samID)},
		{in: "", invalid: true},
		{in: "agent", invalid: true},
		{in: "kind:", invalid: true},
		{in: "kind:robot", invalid: true},
		{in: "kind:Agent", invalid: true},
		{in: "principal:", invalid: true},
		{in: "principal:not-a-uuid", invalid: true},
		{in: "principal:00000000-0000-0000-0000-000000000000", invalid: true},
		{in: "principal:0190B6A4-4F6E-7C1A-9D0E-2F5C3B8A1E77", invalid: true}, // one spelling only
		{in: "principal:{0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77}", invalid: true},
		{in: "team:agent", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := instance.ParseFlagTarget(tc.in)
			if tc.invalid {
				checkTargetError(t, err)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseFlagTarget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if got.String() != tc.in {
				t.Fatalf("String() = %q, want %q (it spells what ParseFlagTarget reads)", got.String(), tc.in)
			}
			if err := got.Validate(); err != nil || got.Problem() != "" {
				t.Fatalf("a parsed target is invalid: %v", err)
			}
		})
	}
}

func TestFlagTargetValidate(t *testing.T) {
	t.Parallel()
	for _, target := range []instance.FlagTarget{
		{},
		{Kind: "robot"},
		{Kind: actor.KindAgent, PrincipalID: samID},
	} {
		checkTargetError(t, target.Validate())
		if target.Problem() == "" {
			t.Fatalf("Problem(%+v) is empty", target)
		}
	}
}

// checkTargetError asserts that err is a validation problem naming the field target.
func checkTargetError(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("error = %v, want a validation problem", err)
	}
	p := problem.From(t.Context(), err)
	if len(p.Errors) != 1 || p.Errors[0].Field != "target" {
		t.Fatalf("fields = %+v, want target", p.Errors)
	}
}

func TestErrFlagNotFoundIsNotFound(t *testing.T) {
	t.Parallel()
	if !errors.Is(instance.ErrFlagNotFound, problem.ErrNotFound) {
		t.Fatal("ErrFlagNotFound is not a problem.ErrNotFound")
	}
}
