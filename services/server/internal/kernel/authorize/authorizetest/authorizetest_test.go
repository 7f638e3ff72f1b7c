package authorizetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestAuthorizerAnswersInOrder(t *testing.T) {
	t.Parallel()
	errRule, errSet := errors.New("rule"), errors.New("set")
	sam := actor.Actor{PrincipalID: uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-000000000001"), Kind: actor.KindPerson}
	pending := sam
	pending.DevicePending = true
	rule := func(authorizetest.Call) error { return errRule }
	tests := []struct {
		name string
		fake *authorizetest.Authorizer
		who  *actor.Actor
		want error
	}{
		{name: "allows by default", fake: &authorizetest.Authorizer{}, want: nil},
		{name: "no actor allowed unless required", fake: &authorizetest.Authorizer{Rule: rule}, want: errRule},
		{name: "no actor", fake: &authorizetest.Authorizer{RequireActor: true, Err: errSet}, want: problem.ErrUnauthenticated},
		{name: "pending device", fake: &authorizetest.Authorizer{RefusePendingDevice: true, Err: errSet}, who: &pending, want: problem.ErrDevicePending},
		{name: "err before rule", fake: &authorizetest.Authorizer{RequireActor: true, Err: errSet, Rule: rule}, who: &sam, want: errSet},
		{name: "rule", fake: &authorizetest.Authorizer{RequireActor: true, Rule: rule}, who: &sam, want: errRule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := authorize.Filter(context.Background())
			if tc.who != nil {
				ctx = actor.With(ctx, *tc.who)
			}
			if err := tc.fake.Authorize(ctx, kernel.ActionInstanceRead, authorize.Instance()); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("Authorize = %v, want %v", err, tc.want)
			}
			calls := tc.fake.Calls()
			if len(calls) != 1 || !calls[0].Filter || calls[0].Authenticated != (tc.who != nil) {
				t.Fatalf("calls = %+v, want the one call in filter mode", calls)
			}
			want := []authorizetest.Decision{{Action: kernel.ActionInstanceRead, Res: authorize.Instance()}}
			if got := tc.fake.Decisions(); len(got) != 1 || got[0] != want[0] {
				t.Fatalf("Decisions = %+v, want %+v", got, want)
			}
			tc.fake.Reset()
			if n := len(tc.fake.Calls()); n != 0 {
				t.Fatalf("%d calls after Reset", n)
			}
		})
	}
}

func TestSetErr(t *testing.T) {
	t.Parallel()
	f := &authorizetest.Authorizer{}
	f.SetErr(problem.ErrNotFound)
	if err := f.Authorize(context.Background(), kernel.ActionInstanceRead, authorize.Instance()); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Authorize = %v, want not found", err)
	}
}
