package contract

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/ids"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
	"bothy.example.com/server/internal/wiretest"
)

// eventSchemaName is the component name of a type's schemas (make codegen): message.created
// gives MessageCreated, read_state.updated ReadStateUpdated.
func eventSchemaName(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// TestEventSchemasAreTheRegister: api/openapi.yaml's Event is discriminated by type over
// exactly the registered types, each mapped to its own envelope, whose payload schema has the
// register's fields and required fields (ADR 0023).
func TestEventSchemasAreTheRegister(t *testing.T) {
	t.Parallel()
	doc, _, err := wiretest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	event := doc.Components.Schemas["Event"].Value
	if event.Discriminator == nil || event.Discriminator.PropertyName != "type" {
		t.Fatalf("Event has discriminator %+v, want one on type", event.Discriminator)
	}
	var registered, oneOf []string
	for _, typ := range syncdomain.Types() {
		registered = append(registered, typ.Name)
	}
	for _, s := range event.OneOf {
		oneOf = append(oneOf, s.Ref)
	}
	mapped := slices.Sorted(maps.Keys(event.Discriminator.Mapping))
	if !slices.Equal(mapped, slices.Sorted(slices.Values(registered))) {
		t.Fatalf("Event maps the types %v, the register has %v", mapped, registered)
	}
	if len(oneOf) != len(registered) {
		t.Fatalf("Event is one of %d schemas, the register has %d types", len(oneOf), len(registered))
	}
	for _, typ := range syncdomain.Types() {
		name := eventSchemaName(typ.Name)
		want := "#/components/schemas/" + name + "Event"
		if got := event.Discriminator.Mapping[typ.Name]; got.Ref != want {
			t.Errorf("%s maps to %q, want %q", typ.Name, got.Ref, want)
		}
		payload := doc.Components.Schemas[name+"Payload"]
		if payload == nil {
			t.Errorf("%s: no %sPayload", typ.Name, name)
			continue
		}
		var fields, required []string
		for _, f := range typ.Fields() {
			fields = append(fields, f.Name)
			if f.Required {
				required = append(required, f.Name)
			}
		}
		if got := slices.Sorted(maps.Keys(payload.Value.Properties)); !slices.Equal(got, slices.Sorted(slices.Values(fields))) {
			t.Errorf("%sPayload has %v, the register %v", name, got, fields)
		}
		if !slices.Equal(payload.Value.Required, required) {
			t.Errorf("%sPayload requires %v, the register %v", name, payload.Value.Required, required)
		}
		if ap := payload.Value.AdditionalProperties.Has; ap == nil || *ap {
			t.Errorf("%sPayload admits members the register refuses", name)
		}
	}
}

// TestEveryEventTypeEnvelopeValidates: for every registered type, the envelope the real
// encoder writes of a payload the register accepts validates against the type's own schema
// and against Event, whole, redacted and traced for an agent; one with the payload of another
// type, an unknown member or a missing field does not.
func TestEveryEventTypeEnvelopeValidates(t *testing.T) {
	t.Parallel()
	alex := syncdomain.PrincipalRef{ID: ids.New(), Kind: actor.KindPerson, DisplayName: "Alex", Handle: "alex"}
	envelope := func(t *testing.T, e kernel.Event, redacted bool, receiver syncdomain.ReceiverKind) []byte {
		t.Helper()
		enc, err := syncdomain.Encode(e)
		if err != nil {
			t.Fatalf("the register refuses the sample: %v", err)
		}
		s := syncdomain.StoredEvent{
			Seq: 7, ID: ids.New(), Type: e.Type, OccurredAt: time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC),
			ActorID: alex.ID, SpaceID: e.SpaceID, ChannelID: e.ChannelID, ThreadID: e.ThreadID,
			ResourceKind: e.ResourceKind, ResourceID: e.ResourceID, AudienceID: e.AudienceID,
			Payload: enc.Payload, CorrelationID: "req-alex-1", TraceContext: enc.TraceContext,
		}
		if redacted {
			s.Payload, err = syncdomain.RedactedPayload(e.Type, enc.Payload)
			if err != nil {
				t.Fatal(err)
			}
			s.Redacted = true
		}
		return syncdomain.AppendEnvelope(nil, s, alex, receiver)
	}
	types := syncdomain.Types()
	for i, typ := range types {
		t.Run(typ.Name, func(t *testing.T) {
			t.Parallel()
			own := eventSchemaName(typ.Name) + "Event"
			valid := map[string][]byte{
				"whole":    envelope(t, eventtest.Event(typ.Name), false, syncdomain.ReceiverPerson),
				"redacted": envelope(t, eventtest.Event(typ.Name), true, syncdomain.ReceiverPerson),
			}
			traced := eventtest.Event(typ.Name)
			traced.TraceContext = map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "bothy=1"}
			valid["traced, for an agent"] = envelope(t, traced, false, syncdomain.ReceiverAgent)
			for name, env := range valid {
				for _, schema := range []string{own, "Event"} {
					if err := wiretest.ValidateSchema(schema, env); err != nil {
						t.Errorf("%s envelope %s against %s: %v", name, env, schema, err)
					}
				}
			}

			// The same envelope with the payload of the next type in the register whose fields
			// differ (grant.created and grant.revoked share theirs).
			next := types[(i+1)%len(types)]
			for j := i + 2; slices.Equal(fieldNames(next), fieldNames(typ)); j++ {
				next = types[j%len(types)]
			}
			other := eventtest.Event(next.Name)
			otherEnc, err := syncdomain.Encode(other)
			if err != nil {
				t.Fatal(err)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(valid["whole"], &members); err != nil {
				t.Fatal(err)
			}
			var payload map[string]json.RawMessage
			if err := json.Unmarshal(members["payload"], &payload); err != nil {
				t.Fatal(err)
			}
			invalid := map[string]json.RawMessage{"the payload of " + other.Type: otherEnc.Payload}
			extra := maps.Clone(payload)
			extra["unknown_member"] = json.RawMessage(`"x"`)
			invalid["an unknown payload member"] = mustJSON(t, extra)
			for _, f := range typ.Fields() {
				if f.Required {
					missing := maps.Clone(payload)
					delete(missing, f.Name)
					invalid["no "+f.Name] = mustJSON(t, missing)
					break
				}
			}
			for name, p := range invalid {
				bad := maps.Clone(members)
				bad["payload"] = p
				env := mustJSON(t, bad)
				for _, schema := range []string{own, "Event"} {
					if err := wiretest.ValidateSchema(schema, env); err == nil {
						t.Errorf("an envelope with %s validates against %s: %s", name, schema, env)
					}
				}
			}
		})
	}
}

func fieldNames(t syncdomain.EventType) []string {
	var names []string
	for _, f := range t.Fields() {
		names = append(names, f.Name)
	}
	return names
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
