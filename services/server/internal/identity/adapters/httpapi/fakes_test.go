package httpapi_test

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
)

// fakeAuthorizer decides like the authz module in the points the handlers rely on: the shared
// fake answers a call without an actor as unauthenticated and a pending device as
// device_pending, then Err when set; otherwise admins (principal ids in admins) may do
// anything while everyone else may only read principals, and denyRes, when set, is refused
// (forbidden) whatever else allows it.
type fakeAuthorizer struct {
	*authorizetest.Authorizer

	mu      sync.Mutex
	admins  map[uuid.UUID]bool
	denyRes *authorize.Resource
}

func newFakeAuthorizer(admins ...uuid.UUID) *fakeAuthorizer {
	f := &fakeAuthorizer{Authorizer: &authorizetest.Authorizer{RequireActor: true, RefusePendingDevice: true}, admins: map[uuid.UUID]bool{}}
	for _, id := range admins {
		f.admins[id] = true
	}
	f.Rule = f.decide
	return f
}

func (f *fakeAuthorizer) decide(c authorizetest.Call) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.denyRes != nil && *f.denyRes == c.Res:
		return problem.ErrForbidden
	case f.admins[c.Actor.PrincipalID], c.Action == kernel.ActionPrincipalRead:
		return nil
	}
	return problem.ErrForbidden
}

// fakePorts implements identity.Principals, identity.Tokens and identity.Devices with canned
// answers, recording what the handlers asked for. err, when set, is every method's answer.
type fakePorts struct {
	mu        sync.Mutex
	err       error
	principal identity.Principal
	issued    identity.IssuedToken
	device    identity.Device
	calls     []string
	person    identity.PersonInput
	app       identity.AppInput
	issueFor  uuid.UUID
	issueDev  *identity.DeviceInput
	approved  uuid.UUID
	token     identity.TokenInfo
	listFor   uuid.UUID
	listLimit int
}

func (f *fakePorts) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakePorts) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakePorts) CreatePerson(_ context.Context, in identity.PersonInput) (identity.Principal, error) {
	f.person = in
	return f.principal, f.record("CreatePerson")
}

func (f *fakePorts) CreateApp(_ context.Context, in identity.AppInput) (identity.Principal, error) {
	f.app = in
	return f.principal, f.record("CreateApp")
}

func (f *fakePorts) CreateAgentPrincipal(context.Context, identity.AgentInput) (identity.Principal, error) {
	return f.principal, f.record("CreateAgentPrincipal")
}

func (f *fakePorts) Get(context.Context, uuid.UUID) (identity.Principal, error) {
	return f.principal, f.record("Get")
}

func (f *fakePorts) Issue(_ context.Context, principalID uuid.UUID, dev *identity.DeviceInput) (identity.IssuedToken, error) {
	f.issueFor, f.issueDev = principalID, dev
	return f.issued, f.record("Issue")
}

func (f *fakePorts) Deactivate(context.Context, uuid.UUID) (identity.Principal, error) {
	return f.principal, f.record("Deactivate")
}

func (f *fakePorts) Reactivate(context.Context, uuid.UUID) (identity.Principal, error) {
	return f.principal, f.record("Reactivate")
}

// tokenPorts adapts fakePorts to identity.Tokens, whose Get clashes with the principals'.
type tokenPorts struct{ f *fakePorts }

func (p tokenPorts) Issue(ctx context.Context, principalID uuid.UUID, dev *identity.DeviceInput) (identity.IssuedToken, error) {
	return p.f.Issue(ctx, principalID, dev)
}

func (p tokenPorts) Revoke(context.Context, uuid.UUID) (identity.TokenInfo, error) {
	return p.f.token, p.f.record("Revoke")
}

func (p tokenPorts) Get(context.Context, uuid.UUID) (identity.TokenInfo, error) {
	return p.f.token, p.f.record("GetToken")
}

func (p tokenPorts) List(_ context.Context, principalID, _ uuid.UUID, limit int) (identity.TokenPage, error) {
	p.f.listFor, p.f.listLimit = principalID, limit
	return identity.TokenPage{Items: []identity.TokenInfo{p.f.token}}, p.f.record("List")
}

// devicePorts adapts fakePorts to identity.Devices, whose Get and Revoke clash with the
// principals' and tokens'.
type devicePorts struct{ f *fakePorts }

func (d devicePorts) Get(context.Context, uuid.UUID) (identity.Device, error) {
	return d.f.device, d.f.record("GetDevice")
}

func (d devicePorts) Approve(_ context.Context, id uuid.UUID) (identity.Device, error) {
	d.f.approved = id
	return d.f.device, d.f.record("Approve")
}

func (d devicePorts) Revoke(context.Context, uuid.UUID) (identity.Device, error) {
	return d.f.device, d.f.record("RevokeDevice")
}

// fakeAuthenticator answers Authenticate from a map of tokens; err, when set, is its answer
// for every token.
type fakeAuthenticator struct {
	actors map[string]actor.Actor
	err    error
}

func (f fakeAuthenticator) Authenticate(_ context.Context, token string) (actor.Actor, error) {
	if f.err != nil {
		return actor.Actor{}, f.err
	}
	a, ok := f.actors[token]
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	return a, nil
}
