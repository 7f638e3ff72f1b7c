package clientbench

import (
	"strings"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

// TestClientCasesFailLoudly checks that a client case without its tools fails and names the make
// target that brings them, instead of skipping.
// Not parallel: it sets CHROMIUM.
func TestClientCasesFailLoudly(t *testing.T) {
	root, err := bench.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = bench.NeedFile(root, "clients/typescript/node_modules/no-such-package/package.json", "sdk: the SDK's npm packages", "make sdk-install")
	if err == nil || !strings.Contains(err.Error(), "run make sdk-install") {
		t.Fatalf("needFile of a missing file = %v, want an error naming make sdk-install", err)
	}
	t.Setenv("CHROMIUM", "/nonexistent/chromium")
	_, err = sidebarCase(t.Context(), &syncbench.SyncWorld{SnapshotChannels: 1}, 1, func(string, ...any) {})
	if err == nil || (!strings.Contains(err.Error(), "make browser-install") && !strings.Contains(err.Error(), "make web-install")) {
		t.Fatalf("sidebarCase without Chromium = %v, want an error naming make browser-install", err)
	}
}
