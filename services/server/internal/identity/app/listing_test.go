package app_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
)

// listingStore is a hand-written ListingStore over handles in order; it records what it was
// asked.
type listingStore struct {
	handles       []string
	prefix, after string
	limit         int
	deactivated   bool
	fail          error
}

func (s *listingStore) PrincipalsPage(_ context.Context, prefix, after string, limit int, includeDeactivated bool) ([]identity.Principal, error) {
	s.prefix, s.after, s.limit, s.deactivated = prefix, after, limit, includeDeactivated
	if s.fail != nil {
		return nil, s.fail
	}
	out := []identity.Principal{}
	for _, h := range s.handles {
		if h > after && len(out) < limit {
			out = append(out, identity.Principal{Handle: h})
		}
	}
	return out, nil
}

func TestListingList(t *testing.T) {
	t.Parallel()
	handles := []string{"alex", "robin", "sam"}
	tests := []struct {
		name      string
		q         identity.PrincipalQuery
		wantLimit int
		wantItems int
		wantNext  string
	}{
		{name: "default limit", q: identity.PrincipalQuery{}, wantLimit: 2, wantItems: 2, wantNext: "robin"},
		{name: "limit above the page size", q: identity.PrincipalQuery{Limit: 50}, wantLimit: 2, wantItems: 2, wantNext: "robin"},
		{name: "negative limit", q: identity.PrincipalQuery{Limit: -1}, wantLimit: 2, wantItems: 2, wantNext: "robin"},
		{name: "small limit", q: identity.PrincipalQuery{Limit: 1}, wantLimit: 1, wantItems: 1, wantNext: "alex"},
		{name: "last page", q: identity.PrincipalQuery{After: "robin", Prefix: "s"}, wantLimit: 2, wantItems: 1, wantNext: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &listingStore{handles: handles}
			l, err := app.NewListing(store, 2)
			if err != nil {
				t.Fatal(err)
			}
			page, err := l.List(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if store.limit != tc.wantLimit || store.prefix != tc.q.Prefix || store.after != tc.q.After {
				t.Fatalf("store asked limit %d prefix %q after %q", store.limit, store.prefix, store.after)
			}
			if len(page.Items) != tc.wantItems || page.Next != tc.wantNext {
				t.Fatalf("page of %d, next %q; want %d, %q", len(page.Items), page.Next, tc.wantItems, tc.wantNext)
			}
		})
	}
}

func TestListingErrors(t *testing.T) {
	t.Parallel()
	if _, err := app.NewListing(nil, 1); err == nil {
		t.Error("NewListing accepted no store")
	}
	if _, err := app.NewListing(&listingStore{}, 0); err == nil {
		t.Error("NewListing accepted a page size of 0")
	}
	boom := errors.New("boom")
	l, err := app.NewListing(&listingStore{fail: boom}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(context.Background(), identity.PrincipalQuery{}); !errors.Is(err, boom) {
		t.Fatalf("List = %v, want the store's error wrapped", fmt.Sprint(err))
	}
}

// TestListingPassesIncludeDeactivated: the store is asked for deactivated principals exactly
// when the query says so (the directory leaves them out by default).
func TestListingPassesIncludeDeactivated(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		store := &listingStore{handles: []string{"alex"}}
		l, err := app.NewListing(store, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.List(context.Background(), identity.PrincipalQuery{IncludeDeactivated: include}); err != nil {
			t.Fatal(err)
		}
		if store.deactivated != include {
			t.Errorf("IncludeDeactivated %v reached the store as %v", include, store.deactivated)
		}
	}
}
