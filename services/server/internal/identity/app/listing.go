package app

import (
	"context"
	"errors"
	"fmt"

	"bothy.example.com/server/internal/identity"
)

// ListingStore reads one page of the principals table for the directory.
type ListingStore interface {
	// PrincipalsPage returns at most limit principals with a handle above after (every
	// handle when after is empty), in handle order, whose handle or display name starts with
	// prefix compared case-insensitively (every principal when prefix is empty); deactivated
	// principals only when includeDeactivated.
	PrincipalsPage(ctx context.Context, prefix, after string, limit int, includeDeactivated bool) ([]identity.Principal, error)
}

// Listing implements identity.PrincipalListing: listPrincipals' use case.
type Listing struct {
	store    ListingStore
	pageSize int
}

var _ identity.PrincipalListing = (*Listing)(nil)

// NewListing returns the directory over store with the page size
// identity.principals_page_size; it fails for a missing store or a page size below 1.
func NewListing(store ListingStore, pageSize int) (*Listing, error) {
	switch {
	case store == nil:
		return nil, errors.New("identity: new listing: store is nil")
	case pageSize < 1:
		return nil, fmt.Errorf("identity: new listing: %s is %d, want at least 1", KeyPrincipalsPageSize.Name, pageSize)
	}
	return &Listing{store: store, pageSize: pageSize}, nil
}

// List implements identity.PrincipalListing: a limit below 1 or above the page size is the
// page size, and a full page names its last handle as the next page's start.
func (l *Listing) List(ctx context.Context, q identity.PrincipalQuery) (identity.PrincipalPage, error) {
	limit := q.Limit
	if limit < 1 || limit > l.pageSize {
		limit = l.pageSize
	}
	items, err := l.store.PrincipalsPage(ctx, q.Prefix, q.After, limit, q.IncludeDeactivated)
	if err != nil {
		return identity.PrincipalPage{}, fmt.Errorf("identity: list principals: %w", err)
	}
	page := identity.PrincipalPage{Items: items}
	if len(items) == limit {
		page.Next = items[len(items)-1].Handle
	}
	return page, nil
}
