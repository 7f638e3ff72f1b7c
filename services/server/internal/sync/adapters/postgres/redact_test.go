package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/tx"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
)

// messageEvent returns a valid event of typ about message id.
func messageEvent(typ string, id uuid.UUID) kernel.Event {
	e := eventtest.Event(typ)
	var payload map[string]any
	if err := json.Unmarshal(e.Payload.(json.RawMessage), &payload); err != nil {
		panic(err)
	}
	payload["message_id"] = id.String()
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	e.ResourceID, e.Payload = id, json.RawMessage(raw)
	return e
}

// idsOnly returns the members of a payload that the type's register marks as ids.
func idsOnly(t *testing.T, typ string, payload []byte) map[string]any {
	t.Helper()
	et, ok := domain.Lookup(typ)
	if !ok {
		t.Fatalf("type %s not registered", typ)
	}
	var all map[string]any
	if err := json.Unmarshal(payload, &all); err != nil {
		t.Fatalf("payload: %v", err)
	}
	out := map[string]any{}
	for _, f := range et.IDFields() {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("payload %s: %v", b, err)
	}
	return m
}

func equalMaps(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestRedactReducesEveryEventOfTheResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, robin := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	e.commit(t, messageEvent("message.created", sam), messageEvent("message.created", robin))
	e.commit(t, messageEvent("message.edited", sam))
	before := e.all(t)

	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		// Staged in this transaction before the call: redacted too, as it is written.
		if err := e.appender.Append(ctx, messageEvent("message.edited", sam)); err != nil {
			return err
		}
		if err := e.appender.Redact(ctx, kernel.ResourceMessage, sam); err != nil {
			return err
		}
		// Appended after the call: the deletion itself stays as it is.
		return e.appender.Append(ctx, messageEvent("message.deleted", sam))
	})
	if err != nil {
		t.Fatalf("RunInTx: %v", err)
	}
	got := e.all(t)
	if len(got) != 5 {
		t.Fatalf("%d events, want 5", len(got))
	}
	tests := []struct {
		name     string
		event    domain.StoredEvent
		original []byte
		redacted bool
	}{
		{name: "created, committed earlier", event: got[0], original: before[0].Payload, redacted: true},
		{name: "another message", event: got[1], original: before[1].Payload},
		{name: "edited, committed earlier", event: got[2], original: before[2].Payload, redacted: true},
		{name: "edited, staged before the call", event: got[3], redacted: true},
		{name: "deleted, appended after the call", event: got[4]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.event.Redacted != tc.redacted {
				t.Errorf("redacted = %v, want %v", tc.event.Redacted, tc.redacted)
			}
			payload := decode(t, tc.event.Payload)
			switch {
			case tc.redacted:
				if want := idsOnly(t, tc.event.Type, tc.event.Payload); !equalMaps(payload, want) || len(want) == 0 {
					t.Errorf("payload %v, want only the ids %v", payload, want)
				}
				if _, ok := payload["content_md"]; ok {
					t.Error("redacted payload still has content_md")
				}
			case tc.original != nil:
				if !equalMaps(payload, decode(t, tc.original)) {
					t.Errorf("payload %s changed from %s", tc.event.Payload, tc.original)
				}
			default:
				if _, ok := payload["redacted_at"]; !ok {
					t.Errorf("payload %s lost its fields", tc.event.Payload)
				}
			}
		})
	}
}

func TestRedactAgainChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alex := uuid.Must(uuid.NewV7())
	e.commit(t, messageEvent("message.created", alex))
	redact := func() {
		t.Helper()
		if err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
			return e.appender.Redact(ctx, kernel.ResourceMessage, alex)
		}); err != nil {
			t.Fatalf("Redact: %v", err)
		}
	}
	redactedAt := func() time.Time {
		t.Helper()
		var at time.Time
		if err := e.pool.QueryRow(t.Context(), "SELECT redacted_at FROM sync.event_log WHERE seq = 1").Scan(&at); err != nil {
			t.Fatalf("redacted_at: %v", err)
		}
		return at
	}
	redact()
	first, payload := redactedAt(), e.all(t)[0].Payload
	redact()
	if second := redactedAt(); !second.Equal(first) {
		t.Errorf("redacted_at moved from %v to %v", first, second)
	}
	if again := e.all(t)[0].Payload; !slices.Equal(again, payload) {
		t.Errorf("payload changed from %s to %s", payload, again)
	}
}

func TestRedactIsPartOfTheCallersTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	robin := uuid.Must(uuid.NewV7())
	e.commit(t, messageEvent("message.created", robin))
	before := e.all(t)[0].Payload
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		if err := e.appender.Redact(ctx, kernel.ResourceMessage, robin); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v, want errBoom", err)
	}
	if got := e.all(t)[0]; got.Redacted || !slices.Equal(got.Payload, before) {
		t.Errorf("a rolled-back redaction left %+v", got)
	}
}

func TestRedactRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name    string
		kind    kernel.ResourceKind
		id      uuid.UUID
		outside bool
		want    error
	}{
		{name: "outside a transaction", kind: kernel.ResourceMessage, id: uuid.Must(uuid.NewV7()), outside: true, want: tx.ErrNoTransaction},
		{name: "nil id", kind: kernel.ResourceMessage, want: syncpg.ErrInvalidResource},
		{name: "empty kind", id: uuid.Must(uuid.NewV7()), want: syncpg.ErrInvalidResource},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if tc.outside {
				err = e.appender.Redact(t.Context(), tc.kind, tc.id)
			} else {
				_ = e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
					err = e.appender.Redact(ctx, tc.kind, tc.id)
					return nil
				})
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Redact = %v, want %v", err, tc.want)
			}
		})
	}
}
