package app_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// TestPrincipalAdminOnAnOwnerNeedsAnOwner: an instance admin manages principals (createToken,
// approveDevice), but minting a token for an owner would let the admin act as the owner, so
// principal.admin on a principal who holds the owner grant is the owners' alone.
func TestPrincipalAdminOnAnOwnerNeedsAnOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 10,
		grantOf(alex, kernel.ResourceInstance, instID, authz.RoleOwner),
		grantOf(robin, kernel.ResourceInstance, instID, authz.RoleOwner),
		grantOf(sam, kernel.ResourceInstance, instID, authz.RoleAdmin),
	)
	plain := uuid.MustParse("0190a6b2-0000-7000-8000-0000000000c1")
	principal := func(id uuid.UUID) authorize.Resource {
		return authorize.Resource{Kind: kernel.ResourcePrincipal, ID: id}
	}
	tests := []struct {
		name  string
		actor uuid.UUID
		res   authorize.Resource
		want  error
	}{
		{"admin on a plain principal", sam, principal(plain), nil},
		{"admin on itself", sam, principal(sam), nil},
		{"admin on an owner", sam, principal(alex), problem.ErrForbidden},
		{"admin on the collection", sam, principal(uuid.Nil), nil},
		{"owner on another owner", alex, principal(robin), nil},
		{"owner on a plain principal", alex, principal(plain), nil},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				err := w.auth.Authorize(as(tc.actor), kernel.ActionPrincipalAdmin, tc.res)
				if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
					t.Fatalf("Authorize(principal.admin) = %v, want %v", err, tc.want)
				}
			})
		}
	})
	if got := w.denials(t, kernel.ActionPrincipalAdmin, "forbidden"); got != 1 {
		t.Errorf("denials{principal.admin, forbidden} = %v, want 1", got)
	}
}
