// Package app is private to module alpha.
package app

import (
	"example.com/archfixture/internal/alpha"
	"example.com/archfixture/internal/kernel/ids"
)

// Service implements alpha.Things.
type Service struct{}

var _ alpha.Things = Service{}

// Count counts things.
func (Service) Count() int { return len(ids.New()) }
