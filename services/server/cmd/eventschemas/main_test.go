package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bothy.example.com/server/internal/sync/domain"
)

func TestSchemaName(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		"message.created":    "MessageCreated",
		"read_state.updated": "ReadStateUpdated",
		"flags.updated":      "FlagsUpdated",
	} {
		if got := schemaName(typ); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", typ, got, want)
		}
	}
}

// doc is a document with the markers around stale generated lines.
const doc = "openapi: 3.0.3\ncomponents:\n  schemas:\n    Before:\n      type: object\n" +
	beginMarker + "\n    Stale:\n      type: object\n" + endMarker + "\n    After:\n      type: object\n"

func TestRunWritesThenChecks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(path, true); !errors.Is(err, errStale) {
		t.Fatalf("check of a stale document = %v, want errStale", err)
	}
	if err := run(path, false); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := run(path, true); err != nil {
		t.Fatalf("check after write: %v", err)
	}
	got, err := os.ReadFile(path) //nolint:gosec // the test's own temporary file
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if strings.Contains(s, "Stale:") || !strings.Contains(s, "    Before:\n") || !strings.HasSuffix(s, endMarker+"\n    After:\n      type: object\n") {
		t.Fatalf("the lines outside the markers changed or the old section stayed:\n%s", s)
	}
	for _, typ := range domain.Types() {
		name := schemaName(typ.Name)
		for _, schema := range []string{name + "Event:", name + "Payload:", name + "RedactedPayload:", "          " + typ.Name + ": "} {
			if !strings.Contains(s, "\n    "+schema) && !strings.Contains(s, "\n"+schema) {
				t.Errorf("no %q in the generated section", schema)
			}
		}
	}
}

func TestSpliceRefusesBrokenMarkers(t *testing.T) {
	t.Parallel()
	for name, d := range map[string]string{
		"no markers":    "openapi: 3.0.3\n",
		"no end":        beginMarker + "\n",
		"end first":     endMarker + "\n" + beginMarker + "\n",
		"begin twice":   beginMarker + "\n" + beginMarker + "\n" + endMarker + "\n",
		"marker inline": "x" + beginMarker + "\n" + endMarker + "\n",
	} {
		if _, err := splice([]byte("\n"+d), "x\n"); err == nil {
			t.Errorf("%s: splice accepted it", name)
		}
	}
}

// TestCommittedDocumentIsCurrent is make codegen-check's first half as a test.
func TestCommittedDocumentIsCurrent(t *testing.T) {
	t.Parallel()
	if err := run(filepath.Join("..", "..", "..", "..", "api", "openapi.yaml"), true); err != nil {
		t.Fatal(err)
	}
}
