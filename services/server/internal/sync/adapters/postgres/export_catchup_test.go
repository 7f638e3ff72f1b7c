package postgres

import "bothy.example.com/server/internal/sync/domain"

// CatchUpPageSQL exposes the catch-up page's statement, so a test can EXPLAIN it.
var CatchUpPageSQL = catchUpPage

// CatchUpPageArgs exposes the statement's parameters for q.
func CatchUpPageArgs(q domain.PageQuery) []any { return catchUpPageArgs(q) }
