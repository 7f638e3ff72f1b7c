package identity

import "context"

// PrincipalQuery selects one page of the directory (listPrincipals).
type PrincipalQuery struct {
	// Prefix keeps the principals whose handle or display name starts with it, compared
	// case-insensitively; empty keeps every principal.
	Prefix string
	// After is the handle of the previous page's last principal; empty for the first page.
	After string
	// Limit is the most principals in the page; below 1 or above
	// identity.principals_page_size it is that page size.
	Limit int
	// IncludeDeactivated lists deactivated principals too (marked); by default the directory
	// lists active ones only, so a mention autocomplete offers no one who cannot be
	// mentioned.
	IncludeDeactivated bool
}

// PrincipalPage is one page of the directory, in handle order.
type PrincipalPage struct {
	// Items are the page's principals, deactivated ones only with IncludeDeactivated.
	Items []Principal
	// Next is the handle to pass as After for the next page; empty on the last page (a page
	// that is not full).
	Next string
}

// PrincipalListing is the directory of the instance's principals: every principal sees every
// principal (spec 04, "Who sees whom"), so it authorizes nothing; its HTTP edge asks
// principal.read first.
type PrincipalListing interface {
	// List returns one page of the principals q selects, in handle order.
	List(ctx context.Context, q PrincipalQuery) (PrincipalPage, error)
}
