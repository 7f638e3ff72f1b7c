// Package authorizetest holds the fake of the authorize port (authorize.Authorizer) that the
// modules' handler and use-case tests share: it records every decision it is asked for and
// answers by the rules a test sets. It is imported only by tests.
package authorizetest

import (
	"context"
	"slices"
	"sync"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// Call is one decision the fake was asked for, with what its context carried.
type Call struct {
	Action kernel.Action
	Res    authorize.Resource
	// Actor is the context's actor, and Authenticated whether there was one.
	Actor         actor.Actor
	Authenticated bool
	// Filter is whether the call came in filter mode (authorize.Filter).
	Filter bool
}

// Authorizer is a fake authorize.Authorizer. It records every call, then answers, in this
// order: problem.ErrUnauthenticated when RequireActor is set and the context has no actor, and
// problem.ErrDevicePending when RefusePendingDevice is set and the actor's device awaits
// approval (both as the authz module does); Err when set; Rule's answer when Rule is set;
// otherwise nil (allow).
// Set the fields before the code under test runs, or between its calls; SetErr, Calls and
// Reset are safe while it runs.
type Authorizer struct {
	// RequireActor answers problem.ErrUnauthenticated to a call without an actor.
	RequireActor bool
	// RefusePendingDevice answers problem.ErrDevicePending to an actor whose device is pending.
	RefusePendingDevice bool
	// Err, when set, answers every (authenticated) call.
	Err error
	// Rule, when set, decides each call Err does not: nil allows it.
	Rule func(Call) error

	mu    sync.Mutex
	calls []Call
}

var _ authorize.Authorizer = (*Authorizer)(nil)

// Authorize records the call and answers it by the fake's rules.
func (a *Authorizer) Authorize(ctx context.Context, action kernel.Action, res authorize.Resource) error {
	who, ok := actor.From(ctx)
	c := Call{Action: action, Res: res, Actor: who, Authenticated: ok, Filter: authorize.IsFilter(ctx)}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	fail, rule := a.Err, a.Rule
	a.mu.Unlock()
	switch {
	case a.RequireActor && !ok:
		return problem.ErrUnauthenticated
	case a.RefusePendingDevice && ok && who.DevicePending:
		return problem.ErrDevicePending
	case fail != nil:
		return fail
	case rule != nil:
		return rule(c)
	}
	return nil
}

// SetErr sets Err while the code under test may be running.
func (a *Authorizer) SetErr(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Err = err
}

// Calls returns a copy of every call so far, in order.
func (a *Authorizer) Calls() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// Reset forgets the calls so far.
func (a *Authorizer) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = nil
}

// Decisions returns the action and resource of every call so far, in order: what most tests
// compare.
func (a *Authorizer) Decisions() []Decision {
	calls := a.Calls()
	out := make([]Decision, len(calls))
	for i, c := range calls {
		out[i] = Decision{Action: c.Action, Res: c.Res}
	}
	return out
}

// Decision is the action and resource of one call, comparable with ==.
type Decision struct {
	Action kernel.Action
	Res    authorize.Resource
}
