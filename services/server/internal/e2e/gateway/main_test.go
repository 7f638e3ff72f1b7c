package gateway

import (
	"os"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
)

func TestMain(m *testing.M) {
	// The second server process of TestGatewayTwoProcesses (gateway_process_test.go).
	if url := os.Getenv(gatewayProcessEnv); url != "" {
		os.Exit(runGatewayProcess(url))
	}
	os.Exit(e2etest.Main(m))
}
