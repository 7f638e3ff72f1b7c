// Package leaktest is the goroutine-leak check every test binary of the server runs after its
// tests (goleak in TestMain), kept in one place so that every package checks the same way.
//
// A package without a database calls Main; a package whose TestMain first runs pgtest.Main
// (which stops the database server and its connections) passes the code to Exit, so that the
// check runs after the server is gone:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
//	func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, identitypg.Migrations())) }
//
// It is imported only by tests.
package leaktest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main runs the tests of m and exits; a passing run fails when a goroutine outlives it.
func Main(m *testing.M) { goleak.VerifyTestMain(m) }

// Exit exits with Check(code): the exit code of a finished run, failed when it passed but a
// goroutine outlived it.
func Exit(code int) { os.Exit(Check(code)) }

// Check returns the exit code of a finished run: code itself when it is not 0 (the failure is
// already reported), 1 when a goroutine outlived a passing run (printed to stderr), else 0.
// For a TestMain that has more to check after the run before it exits.
func Check(code int) int {
	if code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak: leaked goroutines:", err)
		return 1
	}
	return 0
}
