package register

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validRegister is the smallest register that passes Validate; test cases
// change one thing in it at a time.
const validRegister = `
version: 1
server: services/server
vendors:
  pgx: [github.com/jackc/pgx/v5]
  uuid: [github.com/google/uuid]
module_vendors: [pgx, uuid]
modules:
  - name: instance
    path: services/server/internal/instance
    schema: instance
    status: planned
    summary: the instance row and counters
    tables:
      - {name: instance, purpose: the one instance row}
    ports:
      - {name: Versions, purpose: lock-free reads}
    events: [flags.updated]
  - name: identity
    path: services/server/internal/identity
    schema: identity
    status: planned
    summary: principals
    tables:
      - {name: principals, purpose: people and agents}
    ports:
      - {name: Directory, purpose: principal lookups}
    may_use: [instance]
platform:
  - name: kernel
    path: services/server/internal/kernel
    status: active
    summary: shared kernel
    common: true
    schema: bothy_meta
    schema_owner: services/server/internal/kernel/migrate
    tables:
      - {name: schema_migrations, purpose: applied migrations}
    vendors: [pgx]
  - name: ops
    path: services/server/internal/ops
    status: active
    summary: health
    serves_operations: true
  - name: wire
    path: services/server/internal/wire
    status: active
    summary: composition root
    composition_root: true
    may_use: [instance, identity, ops]
    vendors: ["*"]
  - name: cmd
    path: services/server/cmd/bothy
    status: active
    summary: the binary
    program: true
    may_use: [wire]
`

func TestParseValid(t *testing.T) {
	t.Parallel()
	reg, err := Parse([]byte(validRegister))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := len(reg.Modules); got != 2 {
		t.Fatalf("modules = %d, want 2", got)
	}
	if reg.Modules[0].Name != "instance" || reg.Modules[1].Name != "identity" {
		t.Fatalf("module order not kept: %s, %s", reg.Modules[0].Name, reg.Modules[1].Name)
	}
	if c, ok := reg.Component("kernel"); !ok || !c.Common || c.Business {
		t.Fatalf("kernel component = %+v, %v", c, ok)
	}
	if c, ok := reg.Component("identity"); !ok || !c.Business || c.Schema != "identity" {
		t.Fatalf("identity component = %+v, %v", c, ok)
	}
	if got := reg.SchemaOwnerPath("bothy_meta"); got != "services/server/internal/kernel/migrate" {
		t.Fatalf("bothy_meta owner = %q", got)
	}
	if got := reg.SchemaOwnerPath("identity"); got != "services/server/internal/identity" {
		t.Fatalf("identity owner = %q", got)
	}
	rel, err := reg.ServerRelative("services/server/internal/identity")
	if err != nil || rel != "internal/identity" {
		t.Fatalf("ServerRelative = %q, %v", rel, err)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     string
		new     string
		wantErr string
	}{
		{
			name:    "unknown field",
			old:     "    summary: principals\n",
			new:     "    summary: principals\n    colour: blue\n",
			wantErr: "field colour not found",
		},
		{
			name:    "wrong version",
			old:     "version: 1",
			new:     "version: 2",
			wantErr: "version 2",
		},
		{
			name:    "duplicate module",
			old:     "  - name: identity\n",
			new:     "  - name: instance\n",
			wantErr: "duplicate component instance",
		},
		{
			name:    "schema differs from name",
			old:     "    schema: identity\n",
			new:     "    schema: people\n",
			wantErr: "module identity: schema people must equal the module name",
		},
		{
			name:    "composition root using everything",
			old:     "    may_use: [instance, identity, ops]\n",
			new:     "    may_use: [\"*\"]\n",
			wantErr: `component wire: the composition root must list what it uses, not "*"`,
		},
		{
			name:    "composition root using a program",
			old:     "    may_use: [instance, identity, ops]\n",
			new:     "    may_use: [instance, identity, ops, cmd]\n",
			wantErr: "component wire: the composition root may not use the program cmd",
		},
		{
			name:    "a component that is no program using the composition root",
			old:     "    serves_operations: true\n",
			new:     "    serves_operations: true\n    may_use: [wire]\n",
			wantErr: "component ops: only a program may use the composition root wire",
		},
		{
			name:    "a component that is no program using everything",
			old:     "    serves_operations: true\n",
			new:     "    serves_operations: true\n    may_use: [\"*\"]\n",
			wantErr: `component ops: only a program may use "*"`,
		},
		{
			name:    "two composition roots",
			old:     "    program: true\n",
			new:     "    composition_root: true\n",
			wantErr: "2 components are marked composition_root",
		},
		{
			name:    "unknown edge",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [chat]\n",
			wantErr: "module identity: may_use names unknown module chat",
		},
		{
			name:    "self edge",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [identity]\n",
			wantErr: "module identity: may_use names itself",
		},
		{
			name:    "cycle",
			old:     "    events: [flags.updated]\n",
			new:     "    events: [flags.updated]\n    may_use: [identity]\n",
			wantErr: "dependency cycle",
		},
		{
			name:    "bad status",
			old:     "    status: planned\n    summary: principals\n",
			new:     "    status: done\n    summary: principals\n",
			wantErr: "status done",
		},
		{
			name:    "duplicate event",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [instance]\n    events: [flags.updated]\n",
			wantErr: "event flags.updated is written by both instance and identity",
		},
		{
			name:    "unknown vendor",
			old:     "module_vendors: [pgx, uuid]",
			new:     "module_vendors: [pgx, chi]",
			wantErr: "unknown vendor chi",
		},
		{
			name:    "path outside server",
			old:     "    path: services/server/internal/identity\n",
			new:     "    path: services/other/identity\n",
			wantErr: "is not below server directory services/server",
		},
		{
			name:    "nested paths",
			old:     "    path: services/server/internal/ops\n",
			new:     "    path: services/server/internal/kernel/ops\n",
			wantErr: "lies inside",
		},
		{
			name:    "module without tables",
			old:     "      - {name: principals, purpose: people and agents}\n",
			new:     "",
			wantErr: "module identity: tables: none listed",
		},
		{
			name:    "table without purpose",
			old:     "{name: principals, purpose: people and agents}",
			new:     "{name: principals}",
			wantErr: "table principals has no purpose",
		},
		{
			name:    "wildcard edge on a module",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [\"*\"]\n",
			wantErr: "may_use names unknown module *",
		},
		{
			name:    "platform uses unknown component",
			old:     "    serves_operations: true\n",
			new:     "    serves_operations: true\n    may_use: [apigen]\n",
			wantErr: "component ops: may_use names unknown component apigen",
		},
		{
			name:    "reads an unknown schema",
			old:     "    serves_operations: true\n",
			new:     "    serves_operations: true\n    reads_schemas: [billing]\n",
			wantErr: "component ops: reads_schemas names unknown schema billing",
		},
		{
			name:    "writes an unknown schema",
			old:     "    serves_operations: true\n",
			new:     "    serves_operations: true\n    writes_schemas: [billing]\n",
			wantErr: "component ops: writes_schemas names unknown schema billing",
		},
		{
			name:    "module may not write other schemas",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [instance]\n    writes_schemas: [instance]\n",
			wantErr: "field writes_schemas not found",
		},
		{
			name:    "module may not read other schemas",
			old:     "    may_use: [instance]\n",
			new:     "    may_use: [instance]\n    reads_schemas: [instance]\n",
			wantErr: "field reads_schemas not found",
		},
		{
			name:    "bad event name",
			old:     "    events: [flags.updated]\n",
			new:     "    events: [Flags]\n",
			wantErr: "event Flags is not of the form",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(validRegister, tc.old) {
				t.Fatalf("test case broken: %q not in the valid register", tc.old)
			}
			src := strings.Replace(validRegister, tc.old, tc.new, 1)
			_, err := Parse([]byte(src))
			if err == nil {
				t.Fatalf("Parse accepted the register, want error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadReadsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "modules.yaml")
	if err := os.WriteFile(path, []byte(validRegister), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("Load: %v", err)
	}
	_, err := Load(filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("Load of a missing file = %v, want an error naming the file", err)
	}
}

// TestRealRegister keeps the committed register valid: every gate reads it,
// so a broken register would break all of them at once.
func TestRealRegister(t *testing.T) {
	t.Parallel()
	reg, err := Load(filepath.Join("..", "..", "modules.yaml"))
	if err != nil {
		t.Fatalf("architecture/modules.yaml: %v", err)
	}
	want := []string{"instance", "identity", "authz", "agents", "chat", "sync", "ingest"}
	if len(reg.Modules) != len(want) {
		t.Fatalf("modules = %d, want %d", len(reg.Modules), len(want))
	}
	for i, name := range want {
		if reg.Modules[i].Name != name {
			t.Errorf("module %d = %s, want %s (the order is the migration order)", i, reg.Modules[i].Name, name)
		}
	}
}
