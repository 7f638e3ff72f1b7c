// Package ids stands in for the shared kernel.
package ids

import "github.com/google/uuid"

// New returns a fresh id.
func New() uuid.UUID { return uuid.New() }
