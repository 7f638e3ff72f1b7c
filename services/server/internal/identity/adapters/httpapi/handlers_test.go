package httpapi_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/adapters/httpapi"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	adminID  = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	samID    = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a2")
	deviceID = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	tokenID  = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000f1")
	created  = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
)

func newServer(t *testing.T) (*httpapi.Server, *fakeAuthorizer, *fakePorts) {
	t.Helper()
	authz := newFakeAuthorizer(adminID)
	ports := &fakePorts{}
	s, err := httpapi.New(httpapi.Deps{Authorizer: authz, Principals: ports, Tokens: tokenPorts{ports}, Devices: devicePorts{ports}, Listing: noListing{}, TokensPageSize: 100})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, authz, ports
}

func as(id uuid.UUID) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: actor.KindPerson})
}

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	ports := &fakePorts{}
	good := httpapi.Deps{Authorizer: &authorizetest.Authorizer{}, Principals: ports, Tokens: tokenPorts{ports}, Devices: devicePorts{ports}, Listing: noListing{}, TokensPageSize: 100}
	tests := []struct {
		name   string
		change func(*httpapi.Deps)
		want   string
	}{
		{"authorizer", func(d *httpapi.Deps) { d.Authorizer = nil }, "authorizer is nil"},
		{"principals", func(d *httpapi.Deps) { d.Principals = nil }, "principals port is nil"},
		{"tokens", func(d *httpapi.Deps) { d.Tokens = nil }, "tokens port is nil"},
		{"devices", func(d *httpapi.Deps) { d.Devices = nil }, "devices port is nil"},
		{"listing", func(d *httpapi.Deps) { d.Listing = nil }, "listing port is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := good
			tc.change(&d)
			if _, err := httpapi.New(d); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// operation calls one handler of s, discarding the typed response.
type operation struct {
	name     string
	action   kernel.Action
	resource func(ctx context.Context) authorize.Resource
	call     func(ctx context.Context, s *httpapi.Server) (any, error)
	port     string // the port method the handler calls once authorized
}

func operations() []operation {
	principalOf := func(id uuid.UUID) func(context.Context) authorize.Resource {
		return func(context.Context) authorize.Resource {
			return authorize.Resource{Kind: kernel.ResourcePrincipal, ID: id}
		}
	}
	self := func(ctx context.Context) authorize.Resource {
		a, _ := actor.From(ctx)
		return authorize.Resource{Kind: kernel.ResourcePrincipal, ID: a.PrincipalID}
	}
	return []operation{
		{
			name: "getMe", action: kernel.ActionPrincipalRead, resource: self, port: "Get",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.GetMe(ctx, apigen.GetMeRequestObject{})
			},
		},
		{
			name: "createPerson", action: kernel.ActionPrincipalAdmin, resource: principalOf(uuid.Nil), port: "CreatePerson",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreatePerson(ctx, apigen.CreatePersonRequestObject{Body: &apigen.CreatePersonRequest{DisplayName: "Sam", Handle: "sam", Email: "sam@example.com"}})
			},
		},
		{
			name: "createApp", action: kernel.ActionPrincipalAdmin, resource: principalOf(uuid.Nil), port: "CreateApp",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateApp(ctx, apigen.CreateAppRequestObject{Body: &apigen.CreateAppRequest{DisplayName: "Bot", Handle: "bot", Scopes: []apigen.AppScope{"agents:read"}}})
			},
		},
		{
			name: "createToken", action: kernel.ActionPrincipalAdmin, resource: principalOf(samID), port: "Issue",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateToken(ctx, apigen.CreateTokenRequestObject{PrincipalId: samID})
			},
		},
		{
			name: "approveDevice", action: kernel.ActionPrincipalAdmin, resource: principalOf(uuid.Nil), port: "Approve",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ApproveDevice(ctx, apigen.ApproveDeviceRequestObject{DeviceId: deviceID})
			},
		},
		{
			name: "listTokens", action: kernel.ActionTokenAdmin, resource: principalOf(samID), port: "List",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ListTokens(ctx, apigen.ListTokensRequestObject{Params: apigen.ListTokensParams{PrincipalId: &samID}})
			},
		},
		{
			name: "deactivatePrincipal", action: kernel.ActionPrincipalDeactivate, resource: principalOf(samID), port: "Deactivate",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.DeactivatePrincipal(ctx, apigen.DeactivatePrincipalRequestObject{PrincipalId: samID})
			},
		},
		{
			name: "reactivatePrincipal", action: kernel.ActionPrincipalDeactivate, resource: principalOf(samID), port: "Reactivate",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ReactivatePrincipal(ctx, apigen.ReactivatePrincipalRequestObject{PrincipalId: samID})
			},
		},
	}
}

// TestRevokeTokenLooksUpThenAuthorizes checks that revokeToken decides token.admin on the
// actor before it reads anything, then on the token's principal, and answers a refusal of
// the second as an unknown token (404), never revoking.
func TestRevokeTokenLooksUpThenAuthorizes(t *testing.T) {
	t.Parallel()
	self := authorize.Resource{Kind: kernel.ResourcePrincipal, ID: adminID}
	owner := authorize.Resource{Kind: kernel.ResourcePrincipal, ID: samID}
	for _, deny := range []error{nil, problem.ErrForbidden, problem.ErrDevicePending} {
		s, authz, ports := newServer(t)
		authz.Err = deny
		ports.token = identity.TokenInfo{ID: uuid.New(), PrincipalID: samID, CreatedAt: created}
		_, err := s.RevokeToken(as(adminID), apigen.RevokeTokenRequestObject{TokenId: ports.token.ID})
		got := authz.Calls()
		if len(got) == 0 || got[0].Action != kernel.ActionTokenAdmin || got[0].Res != self {
			t.Fatalf("deny %v: decisions = %+v, want token.admin on the actor first", deny, got)
		}
		if deny == nil {
			if err != nil || !slices.Equal(ports.called(), []string{"GetToken", "Revoke"}) || len(got) != 2 || got[1].Res != owner {
				t.Errorf("allowed: err %v, calls %v, decisions %+v", err, ports.called(), got)
			}
		} else if !errors.Is(err, deny) || len(ports.called()) != 0 {
			t.Errorf("deny %v: err %v, calls %v; want the refusal before any read", deny, err, ports.called())
		}
	}
	// Allowed on itself, refused on the token's principal: the 404 of an unknown token.
	s, authz, ports := newServer(t)
	authz.denyRes = &owner
	ports.token = identity.TokenInfo{ID: uuid.New(), PrincipalID: samID, CreatedAt: created}
	if _, err := s.RevokeToken(as(adminID), apigen.RevokeTokenRequestObject{TokenId: ports.token.ID}); !errors.Is(err, identity.ErrTokenNotFound) ||
		slices.Contains(ports.called(), "Revoke") {
		t.Errorf("another's token: err %v, calls %v; want the 404 of an unknown token", err, ports.called())
	}
	s, _, _ = newServer(t)
	if _, err := s.RevokeToken(context.Background(), apigen.RevokeTokenRequestObject{TokenId: uuid.New()}); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("without an actor: err = %v", err)
	}
}

// TestHandlersAuthorizeFirst checks that every handler asks the authorizer with its action
// and resource before anything else and, when refused, returns the refusal as it is without
// touching a port.
func TestHandlersAuthorizeFirst(t *testing.T) {
	t.Parallel()
	denials := []error{problem.ErrNotFound, problem.ErrForbidden, problem.ErrDevicePending, problem.ErrUnauthenticated}
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			for _, deny := range denials {
				s, authz, ports := newServer(t)
				authz.Err = deny
				ctx := as(adminID)
				resp, err := op.call(ctx, s)
				if !errors.Is(err, deny) {
					t.Errorf("denied with %v: err = %v, resp = %v", deny, err, resp)
				}
				if calls := ports.called(); len(calls) != 0 {
					t.Errorf("denied with %v: the handler called %v", deny, calls)
				}
				got := authz.Calls()
				want := authorizetest.Call{Action: op.action, Res: op.resource(ctx), Actor: actor.Actor{PrincipalID: adminID, Kind: actor.KindPerson}, Authenticated: true}
				if len(got) != 1 || got[0].Action != want.Action || got[0].Res != want.Res || got[0].Actor.PrincipalID != adminID {
					t.Errorf("decisions = %+v, want exactly %+v", got, want)
				}
			}

			s, authz, ports := newServer(t)
			if _, err := op.call(context.Background(), s); !errors.Is(err, problem.ErrUnauthenticated) {
				t.Errorf("without an actor: err = %v, want unauthenticated", err)
			}
			if len(ports.called()) != 0 || len(authz.Calls()) != 1 {
				t.Errorf("without an actor: ports %v, decisions %v", ports.called(), authz.Calls())
			}

			s, _, ports = newServer(t)
			if _, err := op.call(as(adminID), s); err != nil {
				t.Fatalf("allowed: %v", err)
			}
			if calls := ports.called(); !slices.Equal(calls, []string{op.port}) {
				t.Errorf("allowed: port calls = %v, want [%s]", calls, op.port)
			}
		})
	}
}

// TestPortErrorsPassThrough checks that the errors of the ports (validation, not found,
// conflict, anything) reach the edge unchanged, which renders them with the one problem table.
func TestPortErrorsPassThrough(t *testing.T) {
	t.Parallel()
	errs := []error{
		problem.Validation(problem.FieldError{Field: "handle", Message: "is required"}),
		identity.ErrPrincipalNotFound, identity.ErrDeviceNotFound, identity.ErrHandleTaken, identity.ErrDeviceRevoked,
		errors.New("database on fire"),
	}
	for _, op := range operations() {
		for _, want := range errs {
			s, _, ports := newServer(t)
			ports.err = want
			if _, err := op.call(as(adminID), s); !errors.Is(err, want) {
				t.Errorf("%s with port error %v: err = %v", op.name, want, err)
			}
		}
	}
}

func TestGetMe(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.principal = identity.Principal{ID: samID, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam", Email: "sam@example.com", CreatedAt: created}
	resp, err := s.GetMe(as(samID), apigen.GetMeRequestObject{})
	if err != nil {
		t.Fatalf("GetMe: %v", err)
	}
	email := "sam@example.com"
	want := apigen.GetMe200JSONResponse{Id: samID, Kind: apigen.PrincipalKindPerson, DisplayName: "Sam", Handle: "sam", Email: &email, CreatedAt: created}
	got, ok := resp.(apigen.GetMe200JSONResponse)
	if !ok || got.Id != want.Id || got.Kind != want.Kind || got.Handle != want.Handle || *got.Email != email || got.Scopes != nil || !got.CreatedAt.Equal(created) {
		t.Errorf("GetMe = %#v, want %#v", resp, want)
	}
}

func TestCreatePersonAndApp(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.principal = identity.Principal{ID: samID, Kind: actor.KindApp, DisplayName: "Bot", Handle: "bot", Scopes: []string{"agents:read", "messages:read"}, CreatedAt: created}
	resp, err := s.CreateApp(as(adminID), apigen.CreateAppRequestObject{Body: &apigen.CreateAppRequest{
		DisplayName: "Bot", Handle: "Bot", Scopes: []apigen.AppScope{"messages:read", "agents:read"},
	}})
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	if ports.app.DisplayName != "Bot" || ports.app.Handle != "Bot" || !slices.Equal(ports.app.Scopes, []string{"messages:read", "agents:read"}) {
		t.Errorf("CreateApp input = %+v", ports.app)
	}
	got, ok := resp.(apigen.CreateApp201JSONResponse)
	if !ok || got.Email != nil || got.Scopes == nil || !slices.Equal(*got.Scopes, []apigen.AppScope{"agents:read", "messages:read"}) {
		t.Errorf("CreateApp = %#v", resp)
	}

	ports.principal = identity.Principal{ID: samID, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam", Email: "sam@example.com", CreatedAt: created}
	presp, err := s.CreatePerson(as(adminID), apigen.CreatePersonRequestObject{Body: &apigen.CreatePersonRequest{DisplayName: "Sam", Handle: "sam", Email: "sam@example.com"}})
	if err != nil {
		t.Fatalf("CreatePerson: %v", err)
	}
	if ports.person != (identity.PersonInput{DisplayName: "Sam", Handle: "sam", Email: "sam@example.com"}) {
		t.Errorf("CreatePerson input = %+v", ports.person)
	}
	if p, ok := presp.(apigen.CreatePerson201JSONResponse); !ok || p.Id != samID || p.Scopes != nil {
		t.Errorf("CreatePerson = %#v", presp)
	}

	for name, call := range map[string]func() error{
		"createPerson": func() error {
			_, err := s.CreatePerson(as(adminID), apigen.CreatePersonRequestObject{})
			return err
		},
		"createApp": func() error {
			_, err := s.CreateApp(as(adminID), apigen.CreateAppRequestObject{})
			return err
		},
	} {
		if err := call(); !errors.Is(err, problem.ErrValidation) {
			t.Errorf("%s without a body: err = %v, want validation_failed", name, err)
		}
	}
}

func TestCreateToken(t *testing.T) {
	t.Parallel()
	name, pending, approved := "Sam's laptop", apigen.CreateTokenRequestDeviceStatus("pending"), apigen.CreateTokenRequestDeviceStatus("approved")
	tests := []struct {
		name       string
		body       *apigen.CreateTokenRequest
		wantDevice *identity.DeviceInput
		wantField  string
	}{
		{name: "no body"},
		{name: "empty body", body: &apigen.CreateTokenRequest{}},
		{name: "device", body: &apigen.CreateTokenRequest{DeviceName: &name}, wantDevice: &identity.DeviceInput{Name: name}},
		{name: "pending device", body: &apigen.CreateTokenRequest{DeviceName: &name, DeviceStatus: &pending}, wantDevice: &identity.DeviceInput{Name: name, Status: identity.DevicePending}},
		{name: "approved device", body: &apigen.CreateTokenRequest{DeviceName: &name, DeviceStatus: &approved}, wantDevice: &identity.DeviceInput{Name: name, Status: identity.DeviceApproved}},
		{name: "status without a device", body: &apigen.CreateTokenRequest{DeviceStatus: &approved}, wantField: "device_status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.issued = identity.IssuedToken{Token: "bothy_secret", TokenID: tokenID, PrincipalID: samID}
			if tc.wantDevice != nil {
				ports.issued.DeviceID = deviceID
				ports.issued.ExpiresAt = created.Add(time.Hour)
			}
			resp, err := s.CreateToken(as(adminID), apigen.CreateTokenRequestObject{PrincipalId: samID, Body: tc.body})
			if tc.wantField != "" {
				p := problem.From(context.Background(), err)
				if p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != tc.wantField {
					t.Fatalf("err = %v, want validation_failed on %s", err, tc.wantField)
				}
				if len(ports.called()) != 0 {
					t.Error("a bad body reached the port")
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateToken: %v", err)
			}
			if ports.issueFor != samID {
				t.Errorf("issued for %s, want %s", ports.issueFor, samID)
			}
			if (ports.issueDev == nil) != (tc.wantDevice == nil) || (tc.wantDevice != nil && *ports.issueDev != *tc.wantDevice) {
				t.Errorf("device input = %+v, want %+v", ports.issueDev, tc.wantDevice)
			}
			got, ok := resp.(apigen.CreateToken201JSONResponse)
			if !ok {
				t.Fatalf("response = %#v", resp)
			}
			if got.Body.Token != "bothy_secret" || got.Body.TokenId != tokenID || got.Headers.CacheControl != "no-store" {
				t.Errorf("response = %+v", got)
			}
			if tc.wantDevice == nil && (got.Body.DeviceId != nil || got.Body.ExpiresAt != nil) {
				t.Errorf("without a device: device_id %v, expires_at %v; want both absent", got.Body.DeviceId, got.Body.ExpiresAt)
			}
			if tc.wantDevice != nil && (got.Body.DeviceId == nil || *got.Body.DeviceId != deviceID || !got.Body.ExpiresAt.Equal(created.Add(time.Hour))) {
				t.Errorf("with a device: %+v", got.Body)
			}
			rec := httptest.NewRecorder()
			if err := got.VisitCreateTokenResponse(rec); err != nil {
				t.Fatalf("visit: %v", err)
			}
			if rec.Code != 201 || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("written: %d, Cache-Control %q", rec.Code, rec.Header().Get("Cache-Control"))
			}
		})
	}
}

func TestApproveDevice(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.device = identity.Device{ID: deviceID, PrincipalID: samID, Name: "phone", Status: identity.DeviceApproved, CreatedAt: created}
	resp, err := s.ApproveDevice(as(adminID), apigen.ApproveDeviceRequestObject{DeviceId: deviceID})
	if err != nil {
		t.Fatalf("ApproveDevice: %v", err)
	}
	if ports.approved != deviceID {
		t.Errorf("approved %s, want %s", ports.approved, deviceID)
	}
	want := apigen.ApproveDevice200JSONResponse{Id: deviceID, PrincipalId: samID, Name: "phone", Status: apigen.DeviceStatusApproved, CreatedAt: created}
	if got, ok := resp.(apigen.ApproveDevice200JSONResponse); !ok || got != want {
		t.Errorf("ApproveDevice = %#v, want %#v", resp, want)
	}
}

// noListing is a directory without principals: the directory's operations are tested over
// real HTTP and PostgreSQL in internal/e2e/identity (directory_test.go).
type noListing struct{}

func (noListing) List(context.Context, identity.PrincipalQuery) (identity.PrincipalPage, error) {
	return identity.PrincipalPage{Items: []identity.Principal{}}, nil
}
