package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

func newGrant(p uuid.UUID, kind kernel.ResourceKind, id uuid.UUID, role authz.Role) authz.Grant {
	return authz.Grant{ID: uuid.Must(uuid.NewV7()), PrincipalID: p, ResourceKind: kind, ResourceID: id, Role: role, CreatedBy: p}
}

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	sam, robin := uuid.New(), uuid.New()
	space, channel := uuid.New(), uuid.New()
	a, err := e.store.Insert(ctx, newGrant(sam, kernel.ResourceSpace, space, authz.RoleMember))
	if err != nil {
		t.Fatalf("Insert: %v", err)
	}
	if a.CreatedAt.IsZero() || a.CreatedAt.Location().String() != "UTC" {
		t.Errorf("CreatedAt = %v, want the database's time in UTC", a.CreatedAt)
	}
	b, err := e.store.Insert(ctx, newGrant(sam, kernel.ResourceChannel, channel, authz.RoleAdmin))
	if err != nil {
		t.Fatalf("Insert: %v", err)
	}
	c, err := e.store.Insert(ctx, newGrant(robin, kernel.ResourceInstance, e.instanceID, authz.RoleOwner))
	if err != nil {
		t.Fatalf("Insert: %v", err)
	}
	got, err := e.store.Get(ctx, b.ID)
	if err != nil || !got.CreatedAt.Equal(b.CreatedAt) || got.Role != authz.RoleAdmin || got.ResourceID != channel {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, b)
	}
	ofSam, err := e.store.OfPrincipal(ctx, sam)
	if err != nil || len(ofSam) != 2 || ofSam[0].ID != a.ID || ofSam[1].ID != b.ID {
		t.Fatalf("OfPrincipal(sam) = %v, %v", ofSam, err)
	}
	all, err := e.store.Page(ctx, uuid.Nil, uuid.Nil, 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("Page(all) = %v, %v", all, err)
	}
	after, err := e.store.Page(ctx, uuid.Nil, a.ID, 1)
	if err != nil || len(after) != 1 || after[0].ID != b.ID {
		t.Fatalf("Page(after a, 1) = %v, %v; want [b]", after, err)
	}
	ofRobin, err := e.store.Page(ctx, robin, uuid.Nil, 10)
	if err != nil || len(ofRobin) != 1 || ofRobin[0].ID != c.ID {
		t.Fatalf("Page(robin) = %v, %v", ofRobin, err)
	}
	gone, err := e.store.Delete(ctx, a.ID)
	if err != nil || gone.ID != a.ID || gone.Role != authz.RoleMember {
		t.Fatalf("Delete = %+v, %v", gone, err)
	}
	if _, err := e.store.Delete(ctx, a.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Delete twice = %v, want not found", err)
	}
	if _, err := e.store.Get(ctx, a.ID); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Get deleted = %v, want not found", err)
	}
}

func TestStoreRefusesASecondGrantOnOneResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, space := uuid.New(), uuid.New()
	if _, err := e.store.Insert(t.Context(), newGrant(sam, kernel.ResourceSpace, space, authz.RoleViewer)); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	_, err := e.store.Insert(t.Context(), newGrant(sam, kernel.ResourceSpace, space, authz.RoleAdmin))
	if !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("second Insert = %v, want conflict", err)
	}
}

func TestSchemaRefusesOwnerOutsideTheInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.store.Insert(t.Context(), newGrant(uuid.New(), kernel.ResourceSpace, uuid.New(), authz.RoleOwner))
	if err == nil || errors.Is(err, problem.ErrConflict) {
		t.Fatalf("owner on a space = %v, want a check violation", err)
	}
}

func TestLockOwnersNeedsATransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.store.LockOwners(t.Context()); !errors.Is(err, tx.ErrNoTransaction) {
		t.Fatalf("LockOwners outside a transaction = %v, want tx.ErrNoTransaction", err)
	}
	var n int
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if _, err := e.store.Insert(ctx, newGrant(uuid.New(), kernel.ResourceInstance, e.instanceID, authz.RoleOwner)); err != nil {
			return err
		}
		var err error
		n, err = e.store.LockOwners(ctx)
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("LockOwners = %d, %v; want 1 (the transaction's own insert)", n, err)
	}
}

func TestPageOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var want []uuid.UUID
	for range 5 {
		g, err := e.store.Insert(t.Context(), newGrant(uuid.New(), kernel.ResourceChannel, uuid.New(), authz.RoleViewer))
		if err != nil {
			t.Fatalf("Insert: %v", err)
		}
		want = append(want, g.ID)
	}
	var got []uuid.UUID
	after := uuid.Nil
	for {
		page, err := e.store.Page(t.Context(), uuid.Nil, after, 2)
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		for _, g := range page {
			got = append(got, g.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged ids = %v, want %v", got, want)
	}
}
