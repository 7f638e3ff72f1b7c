// Package app is private to module beta; it uses alpha through its port.
package app

import "example.com/archfixture/internal/alpha"

// Service implements beta.Stuff on top of alpha.Things.
type Service struct{ Things alpha.Things }

// Total totals stuff.
func (s Service) Total() int { return s.Things.Count() }
