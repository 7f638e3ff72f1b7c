// Package ids mints the identifiers of every entity, as UUIDv7 so ids sort
// by creation time and index well in PostgreSQL.
package ids

import "github.com/google/uuid"

// New returns a fresh UUIDv7. Ids minted by one process are strictly
// increasing, so they double as a creation order. It panics only when the
// system random source fails, which leaves nothing sensible to do.
func New() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}
