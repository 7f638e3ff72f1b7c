package gatewaybench

import (
	"os"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

func TestMain(m *testing.M) {
	// The gateway's cases run this binary again as their client process.
	if code, ok := ClientsChildMain(); ok {
		os.Exit(code)
	}
	if spec, ok := os.LookupEnv(IdleChildEnv); ok {
		os.Exit(IdleChild(spec, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(benchtest.Main(m))
}
