package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureDir = "../../testdata/registercheck/clean"

// Paths inside the fixture that the cases below edit.
const (
	syncPG      = "services/server/internal/sync/adapters/postgres"
	chatPG      = "services/server/internal/chat/adapters/postgres"
	operations  = "api/operations.yaml"
	openapiFile = "api/openapi.yaml"
	registerYML = "architecture/modules.yaml"
)

// TestRegisterCheck proves that each rule of the register check fails on its
// violation with a message naming the place, and that the clean fixture
// passes.
func TestRegisterCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(t *testing.T, root string)
		// want lists lines (or parts of lines) the report must contain; none
		// means the check must pass.
		want []string
	}{
		{
			name:   "clean fixture passes",
			mutate: func(*testing.T, string) {},
		},
		{
			name: "other module's schema in a Go query",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, syncPG+"/leak.go", "package postgres\n\nconst leak = `\nSELECT id\nFROM chat.messages\nWHERE id = $1`\n")
			},
			want: []string{syncPG + "/leak.go:5: sync names schema chat, which only services/server/internal/chat may use"},
		},
		{
			name: "other module's schema in a SQL file",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, syncPG+"/queries/join.sql", "-- name: EventsWithText\nSELECT e.seq, m.content_md\nFROM sync.event_log e JOIN \"chat\".messages m ON m.id = e.seq;\n")
			},
			want: []string{syncPG + "/queries/join.sql:3: sync names schema chat"},
		},
		{
			name: "other module's schema across concatenated literals",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, syncPG+"/concat.go", "package postgres\n\nvar q = \"SELECT id \" +\n\t\"FROM chat.messages\"\n")
			},
			want: []string{syncPG + "/concat.go:4: sync names schema chat"},
		},
		{
			name: "other module's schema in a test file",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, syncPG+"/peek_test.go", "package postgres\n\nconst peek = \"DELETE FROM chat.messages\"\n")
			},
			want: []string{syncPG + "/peek_test.go:3: sync names schema chat"},
		},
		{
			name: "module names the kernel's bookkeeping schema",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, chatPG+"/meta.go", "package postgres\n\nconst meta = `SELECT version FROM bothy_meta.schema_migrations`\n")
			},
			want: []string{chatPG + "/meta.go:3: chat names schema bothy_meta, which only services/server/internal/kernel/migrate may use"},
		},
		{
			name: "kernel names a module schema",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, "services/server/internal/kernel/tx/tx.go", "package tx\n\nconst q = `UPDATE sync.event_log SET seq = 1`\n")
			},
			want: []string{"services/server/internal/kernel/tx/tx.go:3: kernel names schema sync"},
		},
		{
			name: "kernel outside migrate names bothy_meta",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, "services/server/internal/kernel/tx/tx.go", "package tx\n\nconst q = `SELECT 1 FROM bothy_meta.schema_migrations`\n")
			},
			want: []string{"tx.go:3: kernel names schema bothy_meta, which only services/server/internal/kernel/migrate may use"},
		},
		{
			name: "declared read of another schema passes",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "    serves_operations: true\n", "    serves_operations: true\n    reads_schemas: [bothy_meta]\n")
				writeFile(t, root, "services/server/internal/ops/meta_test.go", "package ops\n\nconst q = \"SELECT version FROM bothy_meta.schema_migrations\"\n")
			},
		},
		{
			name: "declared write of another schema passes",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "    serves_operations: true\n", "    serves_operations: true\n    writes_schemas: [bothy_meta]\n")
				writeFile(t, root, "services/server/internal/ops/meta.go", "package ops\n\nconst q = \"DELETE FROM bothy_meta.schema_migrations\"\n")
			},
		},
		{
			name: "declared read does not allow writes",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "    serves_operations: true\n", "    serves_operations: true\n    reads_schemas: [bothy_meta]\n")
				writeFile(t, root, "services/server/internal/ops/meta_test.go", "package ops\n\nconst q = \"DELETE FROM bothy_meta.schema_migrations\"\n")
			},
			want: []string{"services/server/internal/ops/meta_test.go:3: ops may only read schema bothy_meta (reads_schemas), but this SQL writes"},
		},
		{
			name: "platform component names a module schema",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, "services/server/internal/ops/count.go", "package ops\n\nconst count = \"SELECT count(*) FROM chat.messages\"\n")
			},
			want: []string{"services/server/internal/ops/count.go:3: ops names schema chat"},
		},
		{
			name: "table missing from the register",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, chatPG+"/migrations/0002_secrets.sql", "\nCREATE TABLE chat.secrets (id uuid);\n")
			},
			want: []string{chatPG + "/migrations/0002_secrets.sql:2: chat creates table chat.secrets, which architecture/modules.yaml does not list"},
		},
		{
			name: "table without schema",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, chatPG+"/migrations/0002_loose.sql", "CREATE TABLE loose (id uuid);\n")
			},
			want: []string{chatPG + "/migrations/0002_loose.sql:1: chat creates table loose without its schema"},
		},
		{
			name: "table in a foreign unregistered schema",
			mutate: func(t *testing.T, root string) {
				writeFile(t, root, chatPG+"/migrations/0002_public.sql", "CREATE TABLE public.things (id uuid);\n")
			},
			want: []string{"0002_public.sql:1: chat creates table public.things outside its schema chat"},
		},
		{
			name: "listed table never created by an active module",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "      - {name: messages, purpose: the messages}\n", "      - {name: messages, purpose: the messages}\n      - {name: threads, purpose: the threads}\n")
			},
			want: []string{"services/server/internal/chat: chat is active but no migration creates chat.threads"},
		},
		{
			name: "active module without directory",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "    status: planned\n", "    status: active\n")
			},
			want: []string{"services/server/internal/agents: agents is active but its directory does not exist"},
		},
		{
			name: "operation missing from the register",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, openapiFile, "paths:\n", "paths:\n  /version:\n    get:\n      operationId: getVersion\n      responses:\n        \"200\":\n          description: ok\n")
			},
			want: []string{openapiFile + ":8: operation getVersion (GET /version) is not in " + operations},
		},
		{
			name: "method without operation id",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, openapiFile, "      operationId: getHealth\n", "")
			},
			want: []string{openapiFile + ":7: GET /healthz has no operationId", operations + ":11: operation getHealth is enabled but not in " + openapiFile},
		},
		{
			name: "enabled operation missing from openapi",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    module: agents\n    action: agent.read\n    resource: agent\n    status: planned\n", "    module: chat\n    action: agent.read\n    resource: agent\n    status: enabled\n")
			},
			want: []string{operations + ":27: operation listAgents is enabled but not in " + openapiFile},
		},
		{
			name: "planned operation already in openapi",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "  - id: listMessages\n    module: chat\n    action: thread.read\n    resource: thread\n    status: enabled\n", "  - id: listMessages\n    module: chat\n    action: thread.read\n    resource: thread\n    status: planned\n")
			},
			want: []string{operations + ":22: operation listMessages is in " + openapiFile + " but has status planned"},
		},
		{
			name: "unknown action",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    action: message.create\n", "    action: message.shout\n")
			},
			want: []string{operations + ":17: operation createMessage: unknown action message.shout"},
		},
		{
			name: "action none on a non-public operation",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    action: message.create\n", "    action: none\n")
			},
			want: []string{operations + ":17: operation createMessage: action none is only for public operations"},
		},
		{
			name: "public operation with an action",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    action: none\n", "    action: thread.read\n")
			},
			want: []string{operations + ":11: operation getHealth: a public operation takes action none"},
		},
		{
			name: "unknown resource",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    resource: agent\n    status: planned\n", "    resource: robot\n    status: planned\n")
			},
			want: []string{operations + ":27: operation listAgents: unknown resource robot"},
		},
		{
			name: "unknown module",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    module: agents\n", "    module: robots\n")
			},
			want: []string{operations + ":27: operation listAgents: unknown module robots"},
		},
		{
			name: "module that serves no operations",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    module: agents\n", "    module: kernel\n")
			},
			want: []string{"operation listAgents: unknown module kernel"},
		},
		{
			name: "enabled operation of a planned module",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    module: chat\n    action: thread.read\n", "    module: agents\n    action: thread.read\n")
			},
			want: []string{operations + ":22: operation listMessages is enabled but module agents is planned"},
		},
		{
			name: "duplicate operation id",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "  - id: listAgents\n", "  - id: listMessages\n")
			},
			want: []string{operations + ":27: operation listMessages is listed twice (first at line 22)"},
		},
		{
			name: "bad status",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    status: planned\n", "    status: someday\n")
			},
			want: []string{operations + ":27: operation listAgents: status someday is not enabled or planned"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t)
			tc.mutate(t, root)
			var stdout, stderr bytes.Buffer
			code := run([]string{"-root", root}, &stdout, &stderr)
			if len(tc.want) == 0 {
				if code != 0 {
					t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("report lacks %q\nstdout:\n%s\nstderr:\n%s", w, stdout.String(), stderr.String())
				}
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("report has %d lines, want %d (one per violation):\n%s", len(lines), len(tc.want), stdout.String())
			}
		})
	}
}

func TestRunInputErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mutate  func(t *testing.T, root string)
		args    []string
		wantErr string
	}{
		{
			name:    "unknown flag",
			mutate:  func(*testing.T, string) {},
			args:    []string{"-nope"},
			wantErr: "flag provided but not defined",
		},
		{
			name: "missing operation register",
			mutate: func(t *testing.T, root string) {
				if err := os.Remove(filepath.Join(root, operations)); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "operations.yaml",
		},
		{
			name: "invalid module register",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, registerYML, "version: 1", "version: 9")
			},
			wantErr: "version 9 is not supported",
		},
		{
			name: "unknown field in the operation register",
			mutate: func(t *testing.T, root string) {
				replaceIn(t, root, operations, "    public: true\n", "    pubilc: true\n")
			},
			wantErr: "field pubilc not found",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t)
			tc.mutate(t, root)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-root", root}, tc.args...), &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// replaceIn edits one fixture file and fails the test when old is absent,
// so a fixture change cannot silently turn a case into a clean run.
func replaceIn(t *testing.T, root, rel, old, repl string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(path) //nolint:gosec // a file of this test's own fixture copy
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	data = bytes.Replace(data, []byte(old), []byte(repl), 1)
	if err := os.WriteFile(path, data, 0o600); err != nil { //nolint:gosec // writes inside this test's temporary fixture copy
		t.Fatal(err)
	}
}

func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(fixtureDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fixtureDir, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		data, err := os.ReadFile(path) //nolint:gosec // path comes from walking the fixture directory
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600) //nolint:gosec // writes inside this test's temporary fixture copy
	})
	if err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
	return dst
}
