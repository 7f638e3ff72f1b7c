package domain_test

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// TestRegisterMatchesSpec02 is spec 02's table of durable event types, row by row.
func TestRegisterMatchesSpec02(t *testing.T) {
	t.Parallel()
	const personal = kernel.Action("")
	want := []struct {
		typ      string
		resource kernel.ResourceKind
		action   kernel.Action // personal: the type goes to its audience alone
	}{
		{"space.created", kernel.ResourceSpace, kernel.ActionSpaceRead},
		{"space.updated", kernel.ResourceSpace, kernel.ActionSpaceRead},
		{"space.archived", kernel.ResourceSpace, kernel.ActionSpaceRead},
		{"channel.created", kernel.ResourceChannel, kernel.ActionChannelRead},
		{"channel.updated", kernel.ResourceChannel, kernel.ActionChannelRead},
		{"channel.archived", kernel.ResourceChannel, kernel.ActionChannelRead},
		{"thread.created", kernel.ResourceThread, kernel.ActionThreadRead},
		{"thread.updated", kernel.ResourceThread, kernel.ActionThreadRead},
		{"message.created", kernel.ResourceMessage, kernel.ActionThreadRead},
		{"message.edited", kernel.ResourceMessage, kernel.ActionThreadRead},
		{"message.deleted", kernel.ResourceMessage, kernel.ActionThreadRead},
		{"reaction.added", kernel.ResourceMessage, kernel.ActionThreadRead},
		{"reaction.removed", kernel.ResourceMessage, kernel.ActionThreadRead},
		{"agent.created", kernel.ResourceAgent, kernel.ActionAgentRead},
		{"agent.updated", kernel.ResourceAgent, kernel.ActionAgentRead},
		{"agent.presence_changed", kernel.ResourceAgent, kernel.ActionAgentRead},
		{"run.created", kernel.ResourceThread, kernel.ActionThreadRead},
		{"run.updated", kernel.ResourceThread, kernel.ActionThreadRead},
		{"invocation.requested", kernel.ResourceThread, personal},
		{"invocation.failed", kernel.ResourceThread, personal},
		{"principal.deactivated", kernel.ResourcePrincipal, kernel.ActionPrincipalRead},
		{"principal.reactivated", kernel.ResourcePrincipal, kernel.ActionPrincipalRead},
		{"grant.created", kernel.ResourceGrant, personal},
		{"grant.revoked", kernel.ResourceGrant, personal},
		{"permissions.changed", kernel.ResourcePrincipal, personal},
		{"token.revoked", kernel.ResourcePrincipal, personal},
		{"read_state.updated", kernel.ResourceThread, personal},
		{"draft.saved", kernel.ResourceChannel, personal},
		{"draft.deleted", kernel.ResourceChannel, personal},
		{"setting.updated", kernel.ResourcePrincipal, personal},
		{"sidebar.updated", kernel.ResourcePrincipal, personal},
		{"flags.updated", kernel.ResourceInstance, kernel.ActionInstanceRead},
	}
	types := domain.Types()
	if len(types) != len(want) {
		t.Fatalf("%d registered types, spec 02 has %d", len(types), len(want))
	}
	for i, w := range want {
		t.Run(w.typ, func(t *testing.T) {
			t.Parallel()
			got, ok := domain.Lookup(w.typ)
			if !ok {
				t.Fatal("not registered")
			}
			if types[i].Name != w.typ {
				t.Fatalf("register entry %d is %s, want %s (spec order)", i, types[i].Name, w.typ)
			}
			if got.Resource != w.resource {
				t.Fatalf("resource = %s, want %s", got.Resource, w.resource)
			}
			if got.Personal != (w.action == personal) || got.ReceiveAction != w.action {
				t.Fatalf("personal %v, receive action %q; want %q (empty: personal)", got.Personal, got.ReceiveAction, w.action)
			}
		})
	}
}

// TestRegisterMatchesModuleRegister keeps architecture/modules.yaml, which names the one writer
// of each type, and this register listing the same types.
func TestRegisterMatchesModuleRegister(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../../../architecture/modules.yaml")
	if err != nil {
		t.Fatalf("read module register: %v", err)
	}
	var reg struct {
		Modules []struct {
			Name   string   `yaml:"name"`
			Events []string `yaml:"events"`
		} `yaml:"modules"`
	}
	if err := yaml.Unmarshal(b, &reg); err != nil {
		t.Fatalf("parse module register: %v", err)
	}
	var written []string
	for _, m := range reg.Modules {
		written = append(written, m.Events...)
	}
	var registered []string
	for _, typ := range domain.Types() {
		registered = append(registered, typ.Name)
	}
	slices.Sort(written)
	slices.Sort(registered)
	if !slices.Equal(written, registered) {
		t.Fatalf("modules.yaml events = %v\nevent type register = %v", written, registered)
	}
}

func TestRegisterIsWellFormed(t *testing.T) {
	t.Parallel()
	nameRe := regexp.MustCompile(`^[a-z_]+\.[a-z_]+$`)
	fieldRe := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	kinds := []domain.FieldKind{
		domain.KindID, domain.KindIDs, domain.KindString, domain.KindInt, domain.KindBool,
		domain.KindTime, domain.KindObject, domain.KindList, domain.KindStrings, domain.KindValue,
	}
	// The kinds whose shape the generated schemas take from a component of api/openapi.yaml.
	needsSchema := map[domain.FieldKind]bool{domain.KindList: true, domain.KindObject: true}
	for _, typ := range domain.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			t.Parallel()
			if !nameRe.MatchString(typ.Name) {
				t.Errorf("name %q is not resource.verb", typ.Name)
			}
			if !typ.Resource.Valid() {
				t.Errorf("resource %q is not a kernel resource kind", typ.Resource)
			}
			if typ.Personal == typ.ReceiveAction.Valid() {
				t.Errorf("personal %v with receive action %q: want exactly one of them", typ.Personal, typ.ReceiveAction)
			}
			seen := map[string]bool{}
			required := 0
			for _, f := range typ.Fields() {
				if !fieldRe.MatchString(f.Name) || seen[f.Name] {
					t.Errorf("field %q is not snake_case or is listed twice", f.Name)
				}
				seen[f.Name] = true
				if !slices.Contains(kinds, f.Kind) {
					t.Errorf("field %s has unknown kind %q", f.Name, f.Kind)
				}
				if needsSchema[f.Kind] != (f.Schema != "") {
					t.Errorf("field %s of kind %s has schema %q: a list or object names its component schema, no other kind does", f.Name, f.Kind, f.Schema)
				}
				if f.Required {
					required++
				}
			}
			if required == 0 {
				t.Error("no required field: an empty payload would pass")
			}
		})
	}
}

func TestLookupAndTypesReturnCopies(t *testing.T) {
	t.Parallel()
	if _, ok := domain.Lookup("message.read"); ok {
		t.Fatal("Lookup found an unregistered type")
	}
	a, _ := domain.Lookup("message.created")
	fields := a.Fields()
	fields[0].Name = "changed"
	types := domain.Types()
	types[0].Name = "changed"
	b, _ := domain.Lookup("message.created")
	if b.Fields()[0].Name != "message_id" || domain.Types()[0].Name != "space.created" {
		t.Fatal("changing a returned register entry changed the register")
	}
}

// TestPrompt: exactly the addressed types (personal, with an audience action: the invocations)
// are prompt, and Prompt agrees with the register for every type and refuses unknown ones.
func TestPrompt(t *testing.T) {
	t.Parallel()
	var prompt []string
	for _, typ := range domain.Types() {
		if typ.Prompt != (typ.Personal && typ.AudienceAction != "") {
			t.Errorf("%s: Prompt %v, want it exactly for the addressed types", typ.Name, typ.Prompt)
		}
		if domain.Prompt(typ.Name) != typ.Prompt {
			t.Errorf("Prompt(%q) = %v, the register says %v", typ.Name, domain.Prompt(typ.Name), typ.Prompt)
		}
		if typ.Prompt {
			prompt = append(prompt, typ.Name)
		}
	}
	if want := []string{"invocation.requested", "invocation.failed"}; !slices.Equal(prompt, want) {
		t.Errorf("prompt types %v, want %v", prompt, want)
	}
	if domain.Prompt("message.read") {
		t.Error("an unregistered type is prompt")
	}
}

func TestIDFields(t *testing.T) {
	t.Parallel()
	typ, _ := domain.Lookup("message.created")
	want := []string{"message_id", "thread_id", "channel_id", "author_id", "invocation_id"}
	if got := typ.IDFields(); !slices.Equal(got, want) {
		t.Fatalf("IDFields = %v, want %v", got, want)
	}
}

// TestValidateAcceptsEveryType also checks what Encode hands the appender.
func TestValidateAcceptsEveryType(t *testing.T) {
	t.Parallel()
	for _, typ := range domain.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			t.Parallel()
			e := eventtest.Event(typ.Name)
			if err := domain.Validate(e); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			enc, err := domain.Encode(e)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if enc.Type.Name != typ.Name || enc.Type.ReceiveAction != typ.ReceiveAction {
				t.Fatalf("Encode type = %+v, want %+v", enc.Type, typ)
			}
			if string(enc.Payload) != string(e.Payload.(json.RawMessage)) {
				t.Fatalf("payload = %s, want the raw payload as given %s", enc.Payload, e.Payload)
			}
			if enc.TraceContext != nil {
				t.Fatalf("trace context = %s, want none", enc.TraceContext)
			}
		})
	}
}

// with returns a valid message.created event changed by change.
func with(change func(e *kernel.Event)) kernel.Event {
	e := eventtest.Event("message.created")
	change(&e)
	return e
}

// withPayload returns a valid event of typ whose payload has the members of the sample payload,
// then set (a nil value deletes the member), encoded as JSON.
func withPayload(typ string, set map[string]string) kernel.Event {
	e := eventtest.Event(typ)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(e.Payload.(json.RawMessage), &members); err != nil {
		panic(err)
	}
	for k, v := range set {
		if v == "" {
			delete(members, k)
			continue
		}
		members[k] = json.RawMessage(v)
	}
	raw, err := json.Marshal(members)
	if err != nil {
		panic(err)
	}
	e.Payload = json.RawMessage(raw)
	return e
}

func rawPayload(typ, payload string) kernel.Event {
	e := eventtest.Event(typ)
	e.Payload = json.RawMessage(payload)
	return e
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	someID := uuid.MustParse("01900000-0000-7000-8000-000000000001")
	tests := []struct {
		name  string
		event kernel.Event
		want  error
	}{
		{"unregistered type", with(func(e *kernel.Event) { e.Type = "message.read" }), domain.ErrUnregisteredType},
		{"empty type", with(func(e *kernel.Event) { e.Type = "" }), domain.ErrUnregisteredType},
		{"personal without audience", func() kernel.Event {
			e := eventtest.Event("read_state.updated")
			e.AudienceID = uuid.Nil
			return e
		}(), domain.ErrAudienceMissing},
		{"audience on a broadcast type", with(func(e *kernel.Event) { e.AudienceID = someID }), domain.ErrAudienceNotAllowed},
		{"resource kind mismatch", with(func(e *kernel.Event) { e.ResourceKind = kernel.ResourceThread }), domain.ErrResourceMismatch},
		{"resource kind empty", with(func(e *kernel.Event) { e.ResourceKind = "" }), domain.ErrResourceMismatch},
		{"no resource id", with(func(e *kernel.Event) { e.ResourceID = uuid.Nil }), domain.ErrResourceMismatch},
		{"no actor", with(func(e *kernel.Event) { e.ActorID = uuid.Nil }), domain.ErrMissingActor},
		{"message without thread", with(func(e *kernel.Event) { e.ThreadID = uuid.Nil }), domain.ErrPlacement},
		{"thread without channel", with(func(e *kernel.Event) { e.ChannelID = uuid.Nil }), domain.ErrPlacement},
		{"space event elsewhere", func() kernel.Event {
			e := eventtest.Event("space.updated")
			e.SpaceID = someID
			return e
		}(), domain.ErrPlacement},
		{"channel event elsewhere", func() kernel.Event {
			e := eventtest.Event("channel.updated")
			e.ChannelID = someID
			return e
		}(), domain.ErrPlacement},
		{"thread event elsewhere", func() kernel.Event {
			e := eventtest.Event("thread.updated")
			e.ThreadID = someID
			return e
		}(), domain.ErrPlacement},
		{"principal's personal event to another", func() kernel.Event {
			e := eventtest.Event("setting.updated")
			e.AudienceID = someID
			return e
		}(), domain.ErrPlacement},
		{"nil payload", with(func(e *kernel.Event) { e.Payload = nil }), domain.ErrInvalidPayload},
		{"payload not encodable", with(func(e *kernel.Event) { e.Payload = func() {} }), domain.ErrInvalidPayload},
		{"payload a string", with(func(e *kernel.Event) { e.Payload = "hello" }), domain.ErrInvalidPayload},
		{"payload an array", rawPayload("message.created", `[1, 2]`), domain.ErrInvalidPayload},
		{"payload null", rawPayload("message.created", `null`), domain.ErrInvalidPayload},
		{"payload empty", rawPayload("message.created", ``), domain.ErrInvalidPayload},
		{"payload invalid JSON", rawPayload("message.created", `{"message_id": `), domain.ErrInvalidPayload},
		{"payload with trailing data", rawPayload("flags.updated", `{"keys": []} {}`), domain.ErrInvalidPayload},
		{"null member", withPayload("message.created", map[string]string{"mention_ids": `null`}), domain.ErrInvalidPayload},
		{"nested null", withPayload("setting.updated", map[string]string{"value": `{"a": [1, null]}`}), domain.ErrInvalidPayload},
		{"unknown field", withPayload("message.created", map[string]string{"body": `"hello"`}), domain.ErrInvalidPayload},
		{"missing required field", withPayload("message.created", map[string]string{"content_md": ""}), domain.ErrInvalidPayload},
		{"id not a string", withPayload("message.created", map[string]string{"message_id": `7`}), domain.ErrInvalidPayload},
		{"id not a uuid", withPayload("message.created", map[string]string{"message_id": `"m-1"`}), domain.ErrInvalidPayload},
		{"id upper case", withPayload("message.created", map[string]string{"message_id": `"01900000-0000-7000-8000-00000000000A"`}), domain.ErrInvalidPayload},
		{"id without hyphens", withPayload("message.created", map[string]string{"message_id": `"0190000000007000800000000000000a"`}), domain.ErrInvalidPayload},
		{"nil id", withPayload("message.created", map[string]string{"message_id": `"00000000-0000-0000-0000-000000000000"`}), domain.ErrInvalidPayload},
		{"ids not a list", withPayload("message.created", map[string]string{"mention_ids": `"01900000-0000-7000-8000-000000000001"`}), domain.ErrInvalidPayload},
		{"ids with a bad item", withPayload("message.created", map[string]string{"mention_ids": `["01900000-0000-7000-8000-000000000001", 3]`}), domain.ErrInvalidPayload},
		{"string a number", withPayload("message.created", map[string]string{"content_md": `3`}), domain.ErrInvalidPayload},
		{"int a fraction", withPayload("message.created", map[string]string{"seq": `1.5`}), domain.ErrInvalidPayload},
		{"int with exponent", withPayload("message.created", map[string]string{"seq": `1e3`}), domain.ErrInvalidPayload},
		{"int too large", withPayload("message.created", map[string]string{"seq": `9223372036854775808`}), domain.ErrInvalidPayload},
		{"int a string", withPayload("message.created", map[string]string{"seq": `"1"`}), domain.ErrInvalidPayload},
		{"time not RFC 3339", withPayload("message.created", map[string]string{"created_at": `"yesterday"`}), domain.ErrInvalidPayload},
		{"time a number", withPayload("message.created", map[string]string{"created_at": `1700000000`}), domain.ErrInvalidPayload},
		{"strings an object", withPayload("flags.updated", map[string]string{"keys": `{}`}), domain.ErrInvalidPayload},
		{"strings with a number", withPayload("flags.updated", map[string]string{"keys": `["threads", 3]`}), domain.ErrInvalidPayload},
		{"list an object", withPayload("sidebar.updated", map[string]string{"sections": `{}`}), domain.ErrInvalidPayload},
		{"trace context unknown key", with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{"baggage": "a=b"}
		}), domain.ErrInvalidTraceContext},
		{"trace context empty value", with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{"traceparent": ""}
		}), domain.ErrInvalidTraceContext},
		{"trace context too long", with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{"tracestate": strings.Repeat("a", domain.MaxTraceValueLen+1)}
		}), domain.ErrInvalidTraceContext},
		{"trace context control character", with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{"traceparent": "00-a\n"}
		}), domain.ErrInvalidTraceContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := domain.Validate(tt.event)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidateAcceptsOptionalShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		event kernel.Event
	}{
		{"optional field omitted", withPayload("message.created", map[string]string{"mention_ids": ""})},
		{"empty id list", withPayload("message.created", map[string]string{"mention_ids": `[]`})},
		{"negative int", withPayload("thread.updated", map[string]string{"last_message_seq": `-1`})},
		{"time with offset", withPayload("message.created", map[string]string{"created_at": `"2026-12-01T10:30:00.5+01:00"`})},
		{"value a number", withPayload("setting.updated", map[string]string{"value": `12.5`})},
		{"value a bool", withPayload("setting.updated", map[string]string{"value": `false`})},
		{"value an object", withPayload("setting.updated", map[string]string{"value": `{"mode": "dark"}`})},
		{"strings that mention null", withPayload("message.created", map[string]string{
			"content_md": `"null, \"null\" and \\null are only text; n"`,
		})},
		{"payload with white space", rawPayload("flags.updated", " \n{ \"keys\" : [ \"threads\" ] }\n ")},
		{"DM channel without a space", func() kernel.Event {
			e := eventtest.Event("channel.created")
			e.SpaceID = uuid.Nil
			e.Payload = json.RawMessage(`{"channel_id": "` + e.ChannelID.String() + `", "kind": "dm", "version": 1,` +
				` "participant_ids": ["01900000-0000-7000-8000-000000000001", "01900000-0000-7000-8000-000000000002"]}`)
			return e
		}()},
		{"draft of a thread", func() kernel.Event {
			e := eventtest.Event("draft.saved")
			e.ThreadID = uuid.MustParse("01900000-0000-7000-8000-000000000003")
			return e
		}()},
		{"struct payload", with(func(e *kernel.Event) {
			e.Type, e.ResourceKind = "flags.updated", kernel.ResourceInstance
			e.SpaceID, e.ChannelID, e.ThreadID = uuid.Nil, uuid.Nil, uuid.Nil
			e.Payload = struct {
				Keys []string `json:"keys"`
			}{Keys: []string{"threads"}}
		})},
		{"trace context", with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{
				"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
				"tracestate":  "vendor=opaque",
			}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := domain.Validate(tt.event); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	t.Run("raw payload is copied, not re-encoded", func(t *testing.T) {
		t.Parallel()
		raw := json.RawMessage(`{ "keys" : [ "b", "a" ] }`)
		e := with(func(e *kernel.Event) {
			e.Type, e.ResourceKind = "flags.updated", kernel.ResourceInstance
			e.SpaceID, e.ChannelID, e.ThreadID = uuid.Nil, uuid.Nil, uuid.Nil
			e.Payload = raw
		})
		enc, err := domain.Encode(e)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		raw[3] = 'X'
		if string(enc.Payload) != `{ "keys" : [ "b", "a" ] }` {
			t.Fatalf("payload = %s, want the bytes given, unaffected by later changes", enc.Payload)
		}
	})
	t.Run("struct payload is encoded", func(t *testing.T) {
		t.Parallel()
		e := with(func(e *kernel.Event) {
			e.Type, e.ResourceKind = "flags.updated", kernel.ResourceInstance
			e.SpaceID, e.ChannelID, e.ThreadID = uuid.Nil, uuid.Nil, uuid.Nil
			e.Payload = map[string][]string{"keys": {"threads"}}
		})
		enc, err := domain.Encode(e)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		if string(enc.Payload) != `{"keys":["threads"]}` {
			t.Fatalf("payload = %s", enc.Payload)
		}
	})
	t.Run("trace context is encoded", func(t *testing.T) {
		t.Parallel()
		e := with(func(e *kernel.Event) {
			e.TraceContext = map[string]string{"tracestate": "v=1", "traceparent": "00-ab-cd-01"}
		})
		enc, err := domain.Encode(e)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		if string(enc.TraceContext) != `{"traceparent":"00-ab-cd-01","tracestate":"v=1"}` {
			t.Fatalf("trace context = %s", enc.TraceContext)
		}
	})
	t.Run("errors name the type", func(t *testing.T) {
		t.Parallel()
		_, err := domain.Encode(with(func(e *kernel.Event) { e.ActorID = uuid.Nil }))
		if err == nil || !strings.Contains(err.Error(), "message.created") {
			t.Fatalf("Encode = %v, want an error naming message.created", err)
		}
	})
}

func TestRedactedPayload(t *testing.T) {
	t.Parallel()
	const (
		message = "01900000-0000-7000-8000-000000000010"
		thread  = "01900000-0000-7000-8000-000000000011"
		channel = "01900000-0000-7000-8000-000000000012"
		author  = "01900000-0000-7000-8000-000000000013"
		mention = "01900000-0000-7000-8000-000000000014"
	)
	tests := []struct {
		name    string
		typ     string
		payload string
		want    string
		wantErr error
	}{
		{
			name: "message keeps its ids in register order",
			typ:  "message.created",
			payload: `{"seq": 3, "author_id": "` + author + `", "channel_id": "` + channel + `", "thread_id": "` + thread +
				`", "content_md": "secret plans", "created_at": "2026-12-01T09:30:00Z", "message_id": "` + message +
				`", "mention_ids": ["` + mention + `"]}`,
			want: `{"message_id":"` + message + `","thread_id":"` + thread + `","channel_id":"` + channel +
				`","author_id":"` + author + `"}`,
		},
		{
			name:    "absent optional id stays absent",
			typ:     "message.deleted",
			payload: `{"message_id": "` + message + `", "thread_id": "` + thread + `", "channel_id": "` + channel + `", "seq": 1, "redacted_at": "2026-12-01T09:30:00Z"}`,
			want:    `{"message_id":"` + message + `","thread_id":"` + thread + `","channel_id":"` + channel + `"}`,
		},
		{
			name:    "no id field left",
			typ:     "flags.updated",
			payload: `{"keys": ["threads"]}`,
			want:    `{}`,
		},
		{
			name:    "already redacted stays the same",
			typ:     "message.created",
			payload: `{"message_id":"` + message + `"}`,
			want:    `{"message_id":"` + message + `"}`,
		},
		{name: "unregistered type", typ: "message.read", payload: `{}`, wantErr: domain.ErrUnregisteredType},
		{name: "not an object", typ: "message.created", payload: `["` + message + `"]`, wantErr: domain.ErrInvalidPayload},
		{name: "invalid JSON", typ: "message.created", payload: `{"message_id"`, wantErr: domain.ErrInvalidPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.RedactedPayload(tt.typ, json.RawMessage(tt.payload))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("RedactedPayload = %s, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("RedactedPayload = %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}
