package kernel_test

import (
	"os"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// operationsRegister is the part of api/operations.yaml the kernel constants must agree with.
type operationsRegister struct {
	Actions   []string `yaml:"actions"`
	Resources []string `yaml:"resources"`
}

func readOperations(t *testing.T) operationsRegister {
	t.Helper()
	b, err := os.ReadFile("../../../../api/operations.yaml")
	if err != nil {
		t.Fatalf("read operation register: %v", err)
	}
	var reg operationsRegister
	if err := yaml.Unmarshal(b, &reg); err != nil {
		t.Fatalf("parse operation register: %v", err)
	}
	return reg
}

func TestActionsMatchOperationRegister(t *testing.T) {
	t.Parallel()
	reg := readOperations(t)
	var got []string
	for _, a := range kernel.Actions() {
		got = append(got, string(a))
	}
	if !slices.Equal(got, reg.Actions) {
		t.Fatalf("kernel actions = %v\napi/operations.yaml actions = %v", got, reg.Actions)
	}
}

func TestResourceKindsMatchOperationRegister(t *testing.T) {
	t.Parallel()
	reg := readOperations(t)
	var got []string
	for _, k := range kernel.ResourceKinds() {
		got = append(got, string(k))
	}
	if !slices.Equal(got, reg.Resources) {
		t.Fatalf("kernel resource kinds = %v\napi/operations.yaml resources = %v", got, reg.Resources)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"known action", kernel.ActionEventsCatchUp.Valid(), true},
		{"last action", kernel.ActionSyncSnapshotRead.Valid(), true},
		{"unknown action", kernel.Action("message.read").Valid(), false},
		{"empty action", kernel.Action("").Valid(), false},
		{"known kind", kernel.ResourceGrant.Valid(), true},
		{"unknown kind", kernel.ResourceKind("device").Valid(), false},
		{"empty kind", kernel.ResourceKind("").Valid(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Fatalf("Valid() = %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestListsAreCopies(t *testing.T) {
	t.Parallel()
	a := kernel.Actions()
	a[0] = "changed"
	if kernel.Actions()[0] != kernel.ActionInstanceRead {
		t.Fatal("Actions returned the register itself, not a copy")
	}
	k := kernel.ResourceKinds()
	k[0] = "changed"
	if kernel.ResourceKinds()[0] != kernel.ResourceInstance {
		t.Fatal("ResourceKinds returned the register itself, not a copy")
	}
}
