package actor_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestWithFrom(t *testing.T) {
	t.Parallel()
	if _, ok := actor.From(context.Background()); ok {
		t.Fatal("From(empty ctx) ok = true, want false")
	}
	scopes := []string{"messages:write"}
	sam := actor.Actor{
		PrincipalID: uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-000000000001"),
		Kind:        actor.KindPerson,
		Scopes:      scopes,
		DeviceID:    uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-000000000002"),
	}
	ctx := actor.With(context.Background(), sam)
	scopes[0] = "admin"
	got, ok := actor.From(ctx)
	if !ok {
		t.Fatal("From ok = false, want true")
	}
	if got.PrincipalID != sam.PrincipalID || got.Kind != actor.KindPerson || got.DeviceID != sam.DeviceID || got.DevicePending {
		t.Fatalf("From = %+v, want %+v", got, sam)
	}
	if got.Scopes[0] != "messages:write" {
		t.Fatalf("scopes changed through the caller's slice: %v", got.Scopes)
	}
}

func TestHasScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		scopes []string
		scope  string
		want   bool
	}{
		{"present", []string{"messages:read", "messages:write"}, "messages:write", true},
		{"absent", []string{"messages:read"}, "messages:write", false},
		{"no scopes", nil, "messages:read", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := actor.Actor{Kind: actor.KindApp, Scopes: tt.scopes}
			if got := a.HasScope(tt.scope); got != tt.want {
				t.Fatalf("HasScope(%q) = %v, want %v", tt.scope, got, tt.want)
			}
		})
	}
}
