// Package wire binds the fixture's ports to their implementations.
package wire

import (
	alphaapp "example.com/archfixture/internal/alpha/app"
	"example.com/archfixture/internal/beta"
	betaapp "example.com/archfixture/internal/beta/app"
)

// Build wires beta on top of alpha.
func Build() beta.Stuff { return betaapp.Service{Things: alphaapp.Service{}} }
