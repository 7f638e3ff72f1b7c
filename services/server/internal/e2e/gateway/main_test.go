package gateway

import (
	"os"
	"testing"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

func TestMain(m *testing.M) {
	// The second server process of TestGatewayTwoProcesses (gateway_process_test.go).
	if url := os.Getenv(gatewayProcessEnv); url != "" {
		os.Exit(runGatewayProcess(url))
	}
	os.Exit(pgtest.Main(m, wire.Migrations()...))
}
