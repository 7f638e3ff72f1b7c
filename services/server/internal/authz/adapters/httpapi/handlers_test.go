package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/adapters/httpapi"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	alex    = uuid.MustParse("0190a6b2-0000-7000-8000-00000000a1e0")
	sam     = uuid.MustParse("0190a6b2-0000-7000-8000-0000000005a0")
	space   = uuid.MustParse("0190a6b2-0000-7000-8000-000000000051")
	grantID = uuid.MustParse("0190a6b2-0000-7000-8000-0000000000f1")
	inst    = uuid.MustParse("0190a6b2-0000-7000-8000-000000000001")
	created = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
)

func newServer(t *testing.T) (*httpapi.Server, *authorizetest.Authorizer, *fakeGrants) {
	t.Helper()
	a, g := &authorizetest.Authorizer{}, &fakeGrants{}
	s, err := httpapi.New(httpapi.Deps{Authorizer: a, Grants: g})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, a, g
}

func as(id uuid.UUID) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: actor.KindPerson})
}

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	_, err := httpapi.New(httpapi.Deps{})
	if err == nil || !strings.Contains(err.Error(), "authorizer is nil") || !strings.Contains(err.Error(), "grants port is nil") {
		t.Fatalf("New(no deps) = %v", err)
	}
}

// operations are the three handlers, called with a valid request.
var operations = []struct {
	name string
	id   uuid.UUID // the grant id the operation names, uuid.Nil for none
	call func(ctx context.Context, s *httpapi.Server) (any, error)
}{
	{"createGrant", uuid.Nil, func(ctx context.Context, s *httpapi.Server) (any, error) {
		return s.CreateGrant(ctx, apigen.CreateGrantRequestObject{Body: &apigen.CreateGrantRequest{
			PrincipalId: sam, ResourceKind: apigen.GrantResourceKind("space"), ResourceId: &space, Role: apigen.GrantRole("member"),
		}})
	}},
	{"revokeGrant", grantID, func(ctx context.Context, s *httpapi.Server) (any, error) {
		return s.RevokeGrant(ctx, apigen.RevokeGrantRequestObject{GrantId: grantID})
	}},
	{"listGrants", uuid.Nil, func(ctx context.Context, s *httpapi.Server) (any, error) {
		return s.ListGrants(ctx, apigen.ListGrantsRequestObject{})
	}},
}

// TestEveryHandlerAuthorizesFirst: grant.admin on the grant resource before anything else; a
// denial is returned as is and no use case runs.
func TestEveryHandlerAuthorizesFirst(t *testing.T) {
	t.Parallel()
	for _, op := range operations {
		for _, deny := range []error{problem.ErrForbidden, problem.ErrUnauthenticated, problem.ErrDevicePending} {
			t.Run(op.name+"/"+deny.Error(), func(t *testing.T) {
				t.Parallel()
				s, a, g := newServer(t)
				a.Err = deny
				if _, err := op.call(as(sam), s); !errors.Is(err, deny) {
					t.Fatalf("%s = %v, want %v", op.name, err, deny)
				}
				if calls := a.Decisions(); len(calls) != 1 || calls[0].Action != kernel.ActionGrantAdmin ||
					calls[0].Res.Kind != kernel.ResourceGrant || calls[0].Res.ID != op.id {
					t.Fatalf("authorize calls %+v, want one grant.admin on grant %s", calls, op.id)
				}
				if len(g.calls) != 0 {
					t.Fatalf("use cases ran after a denial: %v", g.calls)
				}
			})
		}
	}
}

func TestCreateGrant(t *testing.T) {
	t.Parallel()
	s, _, g := newServer(t)
	g.grant = authz.Grant{ID: grantID, PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: space, Role: authz.RoleMember, CreatedAt: created, CreatedBy: alex}
	resp, err := operations[0].call(as(alex), s)
	if err != nil {
		t.Fatalf("CreateGrant: %v", err)
	}
	want := authz.GrantInput{PrincipalID: sam, ResourceKind: kernel.ResourceSpace, ResourceID: space, Role: authz.RoleMember}
	if g.created != want {
		t.Errorf("use case got %+v, want %+v", g.created, want)
	}
	got, ok := resp.(apigen.CreateGrant201JSONResponse)
	if !ok || got.Id != grantID || got.ResourceId == nil || *got.ResourceId != space || got.CreatedBy != alex || got.Role != "member" {
		t.Fatalf("response %#v", resp)
	}
}

func TestCreateGrantWithoutBody(t *testing.T) {
	t.Parallel()
	s, _, g := newServer(t)
	_, err := s.CreateGrant(as(alex), apigen.CreateGrantRequestObject{})
	if p := problem.From(context.Background(), err); p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != "body" {
		t.Fatalf("no body: %+v", p)
	}
	if len(g.calls) != 0 {
		t.Fatalf("use case ran: %v", g.calls)
	}
}

func TestUseCaseProblemsPassThrough(t *testing.T) {
	t.Parallel()
	for _, op := range operations {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			s, _, g := newServer(t)
			g.err = problem.ErrNotFound
			if _, err := op.call(as(alex), s); !errors.Is(err, problem.ErrNotFound) {
				t.Fatalf("%s = %v, want the use case's not found", op.name, err)
			}
		})
	}
}

func TestRevokeGrant(t *testing.T) {
	t.Parallel()
	s, _, g := newServer(t)
	resp, err := operations[1].call(as(alex), s)
	if err != nil || g.revoked != grantID {
		t.Fatalf("RevokeGrant = %v, revoked %s", err, g.revoked)
	}
	if _, ok := resp.(apigen.RevokeGrant204Response); !ok {
		t.Fatalf("response %#v, want 204", resp)
	}
}

func TestListGrantsParameters(t *testing.T) {
	t.Parallel()
	s, _, g := newServer(t)
	limit := int32(7)
	cursor := uuid.New()
	if _, err := s.ListGrants(as(alex), apigen.ListGrantsRequestObject{Params: apigen.ListGrantsParams{PrincipalId: &sam, Cursor: &cursor, Limit: &limit}}); err != nil {
		t.Fatalf("ListGrants: %v", err)
	}
	if g.listed != [3]any{sam, cursor, 7} {
		t.Fatalf("use case got %v", g.listed)
	}
	if _, err := s.ListGrants(as(alex), apigen.ListGrantsRequestObject{}); err != nil {
		t.Fatalf("ListGrants: %v", err)
	}
	if g.listed != [3]any{uuid.Nil, uuid.Nil, 0} {
		t.Fatalf("use case got %v without parameters", g.listed)
	}
}

// TestJSONShapes encodes the responses as the strict server does: resource_id absent for an
// instance grant, items [] when empty, next_cursor only when there is more, never null.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page app.GrantPage
		want string
	}{
		{"empty", app.GrantPage{}, `{"items":[]}`},
		{"instance grant and a cursor", app.GrantPage{
			Items:      []authz.Grant{{ID: grantID, PrincipalID: alex, ResourceKind: kernel.ResourceInstance, ResourceID: inst, Role: authz.RoleOwner, CreatedAt: created, CreatedBy: alex}},
			NextCursor: grantID,
		}, `{"items":[{"created_at":"2026-12-01T09:30:15Z","created_by":"` + alex.String() + `","id":"` + grantID.String() +
			`","principal_id":"` + alex.String() + `","resource_kind":"instance","role":"owner"}],"next_cursor":"` + grantID.String() + `"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, g := newServer(t)
			g.page = tc.page
			resp, err := s.ListGrants(as(alex), apigen.ListGrantsRequestObject{})
			if err != nil {
				t.Fatalf("ListGrants: %v", err)
			}
			rec := httptest.NewRecorder()
			if err := resp.VisitListGrantsResponse(rec); err != nil {
				t.Fatalf("visit: %v", err)
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatalf("want: %v", err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Fatalf("body %s, want %s", gb, wb)
			}
			if strings.Contains(rec.Body.String(), "null") {
				t.Fatalf("body has null: %s", rec.Body)
			}
		})
	}
}
