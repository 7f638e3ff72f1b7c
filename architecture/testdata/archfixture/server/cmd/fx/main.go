// Command fx runs the fixture.
package main

import "example.com/archfixture/internal/wire"

func main() { _ = wire.Build().Total() }
