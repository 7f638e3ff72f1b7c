// Package beta holds the ports of module beta.
package beta

// Stuff is the port other modules may use.
type Stuff interface{ Total() int }
