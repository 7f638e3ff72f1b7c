package wire_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// TestConfiguration checks that the process reads every registered key (no
// key is dead) through the same functions bothy serve calls, and that
// docs/operations/configuration.md documents exactly the registered keys.
// make register-check runs it (go test -run TestConfiguration).
func TestConfiguration(t *testing.T) {
	t.Parallel()
	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: pgtest.URL(t)})

	logger, err := wire.NewLogger(cfg, io.Discard)
	if err != nil {
		t.Fatalf("NewLogger: %v", err)
	}
	url, stop, err := wire.Database(t.Context(), cfg, logger)
	if err != nil {
		t.Fatalf("Database: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(context.Background()); err != nil {
			t.Errorf("stop database: %v", err)
		}
	})
	app, err := wire.New(t.Context(), cfg, logger, wire.Options{DatabaseURL: url})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	app.Close()

	var registered []string
	for _, k := range config.Registered() {
		registered = append(registered, k.Name)
	}
	if reads := cfg.Reads(); !slices.Equal(reads, registered) {
		t.Errorf("keys read by wiring differ from the registered keys:\nread:       %v\nregistered: %v", reads, registered)
	}

	root, err := wiretest.RepoRoot()
	if err != nil {
		t.Fatalf("repo root: %v", err)
	}
	doc := filepath.Join(root, "docs", "operations", "configuration.md")
	md, err := os.ReadFile(doc) //nolint:gosec // a fixed path under the repository root.
	if err != nil {
		t.Fatalf("read %s: %v", doc, err)
	}
	if err := config.CheckDocumented(config.Registered(), md); err != nil {
		t.Errorf("%s does not match the registered keys (regenerate the table with config.Markdown):\n%v", doc, err)
	}
}
