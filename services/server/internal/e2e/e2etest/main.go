package e2etest

import (
	"testing"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

// Main runs the tests of one end-to-end package on pgtest databases migrated as wire migrates
// them, and returns the exit code for os.Exit. Every package under internal/e2e calls it from
// its TestMain, so what each test binary checks around its tests is written once:
//
//	func TestMain(m *testing.M) { os.Exit(e2etest.Main(m)) }
func Main(m *testing.M) int {
	return pgtest.Main(m, wire.Migrations()...)
}
