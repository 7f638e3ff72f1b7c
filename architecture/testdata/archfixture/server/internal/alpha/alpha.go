// Package alpha holds the ports of module alpha.
package alpha

// Things is the port other modules may use.
type Things interface{ Count() int }
