package eventtest_test

import (
	"encoding/json"
	"testing"

	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestEventIsValidForEveryType(t *testing.T) {
	t.Parallel()
	for _, typ := range domain.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			t.Parallel()
			e := eventtest.Event(typ.Name)
			if err := domain.Validate(e); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			var payload map[string]any
			if err := json.Unmarshal(e.Payload.(json.RawMessage), &payload); err != nil {
				t.Fatalf("payload: %v", err)
			}
			if len(payload) != len(typ.Fields()) {
				t.Fatalf("payload has %d fields, want every one of %d", len(payload), len(typ.Fields()))
			}
		})
	}
}

func TestEventPanicsForAnUnregisteredType(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("Event did not panic")
		}
	}()
	eventtest.Event("nothing.happened")
}
