package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/jsontext"
)

// The errors Validate and Encode wrap, one per rule, so that callers and tests can tell them
// apart with errors.Is.
var (
	// ErrUnregisteredType: the event's type is not in the register.
	ErrUnregisteredType = errors.New("unregistered event type")
	// ErrAudienceMissing: a personal type without an audience.
	ErrAudienceMissing = errors.New("personal event without an audience")
	// ErrAudienceNotAllowed: an audience on a type that is not personal.
	ErrAudienceNotAllowed = errors.New("audience on an event that is not personal")
	// ErrResourceMismatch: the resource kind differs from the type's, or the resource id is
	// missing.
	ErrResourceMismatch = errors.New("event resource does not match its type")
	// ErrPlacement: the space, channel and thread ids do not fit the resource (a channel event
	// whose channel id is not the resource, a thread outside a channel, ...).
	ErrPlacement = errors.New("event placement does not fit its resource")
	// ErrMissingActor: the event names no actor.
	ErrMissingActor = errors.New("event without an actor")
	// ErrInvalidPayload: the payload is not a JSON object of the registered shape (invalid
	// JSON, not an object, a null anywhere, an unknown field, a missing required field, a
	// field of the wrong kind).
	ErrInvalidPayload = errors.New("invalid event payload")
	// ErrInvalidTraceContext: a trace context entry other than a non-empty, printable
	// traceparent or tracestate of at most MaxTraceValueLen bytes.
	ErrInvalidTraceContext = errors.New("invalid trace context")
)

// MaxTraceValueLen bounds a trace context value: tracestate may be 512 characters in W3C Trace
// Context, and the value comes from outside, so it must not grow the log without bound.
const MaxTraceValueLen = 512

// traceKeys are the W3C Trace Context headers an event may carry.
var traceKeys = map[string]bool{"traceparent": true, "tracestate": true}

// FieldKind is the JSON shape of one payload field.
type FieldKind string

// The payload field kinds. None admits null.
const (
	// KindID is a UUID string in canonical lower-case form, not the nil UUID. Redaction keeps
	// these fields and nothing else.
	KindID FieldKind = "id"
	// KindIDs is an array of KindID strings (mentions, participants); redaction drops it, since
	// such lists are derived from the content.
	KindIDs FieldKind = "ids"
	// KindString is any JSON string.
	KindString FieldKind = "string"
	// KindInt is a JSON integer (no fraction, no exponent) that fits an int64.
	KindInt FieldKind = "int"
	// KindBool is true or false.
	KindBool FieldKind = "bool"
	// KindTime is an RFC 3339 timestamp string.
	KindTime FieldKind = "time"
	// KindObject is a JSON object.
	KindObject FieldKind = "object"
	// KindList is a JSON array; its items are described by the field's Schema.
	KindList FieldKind = "list"
	// KindStrings is an array of JSON strings (flag keys).
	KindStrings FieldKind = "strings"
	// KindValue is any JSON value (a setting's value).
	KindValue FieldKind = "value"
)

// Field is one payload field of an event type.
type Field struct {
	// Name is the JSON member name (snake_case).
	Name string
	// Kind is its JSON shape.
	Kind FieldKind
	// Required fields must be present; the others may be omitted (never null).
	Required bool
	// Schema names the component of api/openapi.yaml that describes the value where the kind
	// alone leaves it loose: the items of a KindList, the members of a KindObject. The
	// generated event schemas (make codegen) refer to it; empty for the other kinds.
	Schema string
}

// EventType is one entry of the register of durable event types (spec 02).
type EventType struct {
	// Name is the type as stored and sent, resource.verb.
	Name string
	// Resource is the kind of resource every event of the type changes.
	Resource kernel.ResourceKind
	// ReceiveAction is what a receiver must be allowed on the resource to receive the event;
	// empty for a personal type.
	ReceiveAction kernel.Action
	// Personal types go to their audience alone, a principal named per event.
	Personal bool
	// AudienceAction, on a personal type, is what its audience must still be allowed on the
	// resource when the event is delivered (an invocation of a thread the agent can no longer
	// read is not delivered); empty for every other type. It is not stored with the event:
	// delivery looks it up by type.
	AudienceAction kernel.Action
	// Prompt types are waited on by their audience (an agent being asked, a person learning
	// that no agent answered): the gateway hands out a batch holding one at once instead of
	// at the end of gateway.batch_window (spec 03, "Live batching"). The addressed types.
	Prompt bool

	fields []Field
}

// Fields returns the payload fields in their register order (a copy).
func (t EventType) Fields() []Field {
	return slices.Clone(t.fields)
}

// IDFields returns the names of the fields redaction keeps (KindID), in register order, for
// callers that reduce payloads inside PostgreSQL.
func (t EventType) IDFields() []string {
	var names []string
	for _, f := range t.fields {
		if f.Kind == KindID {
			names = append(names, f.Name)
		}
	}
	return names
}

func (t EventType) field(name string) (Field, bool) {
	for _, f := range t.fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

func req(name string, kind FieldKind) Field { return Field{Name: name, Kind: kind, Required: true} }
func opt(name string, kind FieldKind) Field { return Field{Name: name, Kind: kind} }

// reqList is a required KindList field whose items follow the component schema of
// api/openapi.yaml.
func reqList(name, schema string) Field {
	return Field{Name: name, Kind: KindList, Required: true, Schema: schema}
}

func broadcast(name string, resource kernel.ResourceKind, action kernel.Action, fields ...Field) EventType {
	return EventType{Name: name, Resource: resource, ReceiveAction: action, fields: fields}
}

func personal(name string, resource kernel.ResourceKind, fields ...Field) EventType {
	return EventType{Name: name, Resource: resource, Personal: true, fields: fields}
}

// addressed is a personal type whose audience must also still be allowed action on the
// event's resource when it is delivered (AudienceAction).
func addressed(name string, resource kernel.ResourceKind, action kernel.Action, fields ...Field) EventType {
	return EventType{Name: name, Resource: resource, Personal: true, AudienceAction: action, Prompt: true, fields: fields}
}

// invocationFields are the members of an Invocation (api/openapi.yaml), which both invocation
// events carry whole.
func invocationFields() []Field {
	return []Field{
		req("id", KindID), req("agent_id", KindID), req("message_id", KindID), req("thread_id", KindID),
		req("channel_id", KindID), req("invoked_by", KindID), req("reason", KindString), req("attempt", KindInt),
		req("state", KindString), req("created_at", KindTime),
	}
}

// register is spec 02's table of durable types, in its order, with the payload of each. A
// writer adds a field here in the same change that starts sending it.
var register = []EventType{
	broadcast("space.created", kernel.ResourceSpace, kernel.ActionSpaceRead,
		req("space_id", KindID), req("name", KindString), opt("description", KindString), req("version", KindInt)),
	broadcast("space.updated", kernel.ResourceSpace, kernel.ActionSpaceRead,
		req("space_id", KindID), opt("name", KindString), opt("description", KindString), req("version", KindInt)),
	broadcast("space.archived", kernel.ResourceSpace, kernel.ActionSpaceRead,
		req("space_id", KindID), req("archived_at", KindTime), req("version", KindInt)),

	broadcast("channel.created", kernel.ResourceChannel, kernel.ActionChannelRead,
		req("channel_id", KindID), opt("space_id", KindID), req("kind", KindString), opt("name", KindString),
		opt("topic", KindString), opt("participant_ids", KindIDs), req("version", KindInt)),
	broadcast("channel.updated", kernel.ResourceChannel, kernel.ActionChannelRead,
		req("channel_id", KindID), opt("space_id", KindID), opt("name", KindString), opt("topic", KindString),
		req("version", KindInt)),
	broadcast("channel.archived", kernel.ResourceChannel, kernel.ActionChannelRead,
		req("channel_id", KindID), opt("space_id", KindID), req("archived_at", KindTime), req("version", KindInt)),

	broadcast("thread.created", kernel.ResourceThread, kernel.ActionThreadRead,
		req("thread_id", KindID), req("channel_id", KindID), opt("title", KindString), req("created_by", KindID),
		req("version", KindInt)),
	broadcast("thread.updated", kernel.ResourceThread, kernel.ActionThreadRead,
		req("thread_id", KindID), req("channel_id", KindID), opt("title", KindString),
		opt("last_message_seq", KindInt), req("version", KindInt)),

	broadcast("message.created", kernel.ResourceMessage, kernel.ActionThreadRead,
		req("message_id", KindID), req("thread_id", KindID), req("channel_id", KindID), req("author_id", KindID),
		req("seq", KindInt), req("content_md", KindString), opt("mention_ids", KindIDs), req("created_at", KindTime),
		opt("invocation_id", KindID)),
	broadcast("message.edited", kernel.ResourceMessage, kernel.ActionThreadRead,
		req("message_id", KindID), req("thread_id", KindID), req("channel_id", KindID), req("author_id", KindID),
		req("seq", KindInt), req("content_md", KindString), opt("mention_ids", KindIDs), req("edited_at", KindTime)),
	broadcast("message.deleted", kernel.ResourceMessage, kernel.ActionThreadRead,
		req("message_id", KindID), req("thread_id", KindID), req("channel_id", KindID), opt("author_id", KindID),
		req("seq", KindInt), req("redacted_at", KindTime)),
	broadcast("reaction.added", kernel.ResourceMessage, kernel.ActionThreadRead,
		req("message_id", KindID), req("thread_id", KindID), req("channel_id", KindID), req("principal_id", KindID),
		req("reaction", KindString)),
	broadcast("reaction.removed", kernel.ResourceMessage, kernel.ActionThreadRead,
		req("message_id", KindID), req("thread_id", KindID), req("channel_id", KindID), req("principal_id", KindID),
		req("reaction", KindString)),

	broadcast("agent.created", kernel.ResourceAgent, kernel.ActionAgentRead,
		req("agent_id", KindID), req("display_name", KindString), req("handle", KindString),
		opt("description", KindString), opt("created_by", KindID)),
	broadcast("agent.updated", kernel.ResourceAgent, kernel.ActionAgentRead,
		req("agent_id", KindID), opt("display_name", KindString), opt("handle", KindString),
		opt("description", KindString), opt("archived_at", KindTime)),
	broadcast("agent.presence_changed", kernel.ResourceAgent, kernel.ActionAgentRead,
		req("agent_id", KindID), req("state", KindString), opt("reported_billing_mode", KindString),
		req("last_heartbeat_at", KindTime)),

	// Runs (ADR 0027) are thread events: the resource is the run's thread, so exactly the
	// thread's readers receive them; both carry the whole run.
	broadcast("run.created", kernel.ResourceThread, kernel.ActionThreadRead,
		req("run_id", KindID), req("agent_id", KindID), req("thread_id", KindID), req("channel_id", KindID),
		req("requested_by", KindID), opt("invocation_id", KindID), req("state", KindString), req("progress", KindString),
		req("version", KindInt), req("created_at", KindTime), req("updated_at", KindTime), opt("ended_at", KindTime),
		opt("cancelled_by", KindID)),
	broadcast("run.updated", kernel.ResourceThread, kernel.ActionThreadRead,
		req("run_id", KindID), req("agent_id", KindID), req("thread_id", KindID), req("channel_id", KindID),
		req("requested_by", KindID), opt("invocation_id", KindID), req("state", KindString), req("progress", KindString),
		req("version", KindInt), req("created_at", KindTime), req("updated_at", KindTime), opt("ended_at", KindTime),
		opt("cancelled_by", KindID)),

	// Invocations (ADR 0031) are addressed: personal events (the invoked agent for
	// invocation.requested; the invoking person and the agent, one event each, for
	// invocation.failed) placed on the invocation's thread, delivered only while their
	// audience may still read it (thread.read at delivery time, like any thread event).
	addressed("invocation.requested", kernel.ResourceThread, kernel.ActionThreadRead, invocationFields()...),
	addressed("invocation.failed", kernel.ResourceThread, kernel.ActionThreadRead, invocationFields()...),

	broadcast("principal.deactivated", kernel.ResourcePrincipal, kernel.ActionPrincipalRead,
		req("principal_id", KindID), req("deactivated_at", KindTime)),
	broadcast("principal.reactivated", kernel.ResourcePrincipal, kernel.ActionPrincipalRead,
		req("principal_id", KindID)),

	personal("grant.created", kernel.ResourceGrant,
		req("grant_id", KindID), req("principal_id", KindID), req("resource_kind", KindString),
		opt("resource_id", KindID), req("role", KindString)),
	personal("grant.revoked", kernel.ResourceGrant,
		req("grant_id", KindID), req("principal_id", KindID), req("resource_kind", KindString),
		opt("resource_id", KindID), req("role", KindString)),
	personal("permissions.changed", kernel.ResourcePrincipal,
		req("principal_id", KindID), req("permission_version", KindInt)),
	personal("token.revoked", kernel.ResourcePrincipal,
		req("principal_id", KindID), req("token_id", KindID), req("revoked_at", KindTime)),
	personal("read_state.updated", kernel.ResourceThread,
		req("thread_id", KindID), req("channel_id", KindID), req("last_read_seq", KindInt), req("version", KindInt)),
	personal("draft.saved", kernel.ResourceChannel,
		req("channel_id", KindID), opt("thread_id", KindID), req("content_md", KindString), req("version", KindInt)),
	personal("draft.deleted", kernel.ResourceChannel,
		req("channel_id", KindID), opt("thread_id", KindID), req("version", KindInt)),
	personal("setting.updated", kernel.ResourcePrincipal,
		req("key", KindString), req("value", KindValue), req("version", KindInt)),
	personal("sidebar.updated", kernel.ResourcePrincipal,
		reqList("sections", "SidebarSection"), req("version", KindInt)),

	broadcast("flags.updated", kernel.ResourceInstance, kernel.ActionInstanceRead,
		req("keys", KindStrings)),
}

var byName = func() map[string]*EventType {
	m := make(map[string]*EventType, len(register))
	for i := range register {
		m[register[i].Name] = &register[i]
	}
	return m
}()

// Types returns every registered type, in the order of spec 02's table.
func Types() []EventType {
	out := make([]EventType, len(register))
	for i, t := range register {
		t.fields = slices.Clone(t.fields)
		out[i] = t
	}
	return out
}

// Prompt reports whether events of the type name are prompt (EventType.Prompt), without
// Lookup's copy: the gateway asks it of every live event.
func Prompt(name string) bool {
	p, ok := byName[name]
	return ok && p.Prompt
}

// Lookup returns the registered type of name; ok is false for an unregistered one.
func Lookup(name string) (t EventType, ok bool) {
	p, ok := byName[name]
	if !ok {
		return EventType{}, false
	}
	t = *p
	t.fields = slices.Clone(p.fields)
	return t, true
}

// EncodedEvent is an event that passed Validate, with its JSON encoded once, ready to store.
type EncodedEvent struct {
	// Type is the event's register entry (its ReceiveAction is stored with the event).
	Type EventType
	// Payload is the payload as a JSON object of the registered shape.
	Payload json.RawMessage
	// TraceContext is the trace context as a JSON object; nil when the event has none.
	TraceContext json.RawMessage
}

// Validate checks e against the register: a registered type; an audience exactly when the type
// is personal; the type's resource kind and a resource id; an actor; space, channel and thread
// ids that fit the resource; a payload that is a JSON object of the registered shape without
// null; a well-formed trace context. Each failure wraps one of the Err variables.
func Validate(e kernel.Event) error {
	_, err := Encode(e)
	return err
}

// Encode validates e like Validate and returns its payload and trace context encoded, so that
// the appender encodes each event exactly once. A json.RawMessage payload is checked and
// copied, not re-encoded; any other payload goes through encoding/json.
func Encode(e kernel.Event) (EncodedEvent, error) {
	p, ok := byName[e.Type]
	if !ok {
		return EncodedEvent{}, fmt.Errorf("%w: %q", ErrUnregisteredType, e.Type)
	}
	if err := checkEnvelope(p, e); err != nil {
		return EncodedEvent{}, fmt.Errorf("event %s: %w", e.Type, err)
	}
	payload, err := encodePayload(p, e.Payload)
	if err != nil {
		return EncodedEvent{}, fmt.Errorf("event %s: %w", e.Type, err)
	}
	trace, err := encodeTrace(e.TraceContext)
	if err != nil {
		return EncodedEvent{}, fmt.Errorf("event %s: %w", e.Type, err)
	}
	return EncodedEvent{Type: *p, Payload: payload, TraceContext: trace}, nil
}

// checkEnvelope checks everything of e but its payload and trace context.
func checkEnvelope(t *EventType, e kernel.Event) error {
	switch {
	case t.Personal && e.AudienceID == uuid.Nil:
		return ErrAudienceMissing
	case !t.Personal && e.AudienceID != uuid.Nil:
		return ErrAudienceNotAllowed
	case e.ResourceKind != t.Resource:
		return fmt.Errorf("%w: resource kind %q, want %q", ErrResourceMismatch, e.ResourceKind, t.Resource)
	case e.ResourceID == uuid.Nil:
		return fmt.Errorf("%w: no resource id", ErrResourceMismatch)
	case e.ActorID == uuid.Nil:
		return ErrMissingActor
	}
	return checkPlacement(t, e)
}

// checkPlacement keeps the ids catch-up filters and authorizes by consistent with the resource:
// an event the prefilter cannot place would be offered to everyone.
func checkPlacement(t *EventType, e kernel.Event) error {
	switch t.Resource {
	case kernel.ResourceSpace:
		if e.SpaceID != e.ResourceID {
			return fmt.Errorf("%w: a space event's space id is its resource id", ErrPlacement)
		}
	case kernel.ResourceChannel:
		if e.ChannelID != e.ResourceID {
			return fmt.Errorf("%w: a channel event's channel id is its resource id", ErrPlacement)
		}
	case kernel.ResourceThread:
		if e.ThreadID != e.ResourceID {
			return fmt.Errorf("%w: a thread event's thread id is its resource id", ErrPlacement)
		}
	case kernel.ResourceMessage:
		if e.ThreadID == uuid.Nil {
			return fmt.Errorf("%w: a message event needs its thread id", ErrPlacement)
		}
	case kernel.ResourcePrincipal:
		if t.Personal && e.ResourceID != e.AudienceID {
			return fmt.Errorf("%w: a principal's personal event goes to that principal", ErrPlacement)
		}
	}
	if e.ThreadID != uuid.Nil && e.ChannelID == uuid.Nil {
		return fmt.Errorf("%w: a thread lies in a channel, the channel id is missing", ErrPlacement)
	}
	return nil
}

func encodePayload(t *EventType, payload any) (json.RawMessage, error) {
	var raw json.RawMessage
	if r, ok := payload.(json.RawMessage); ok {
		// Copied: the appender keeps it until the commit phase, and the caller may reuse r.
		raw = bytes.Clone(r)
	} else {
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidPayload, err)
		}
		raw = b
	}
	if err := checkPayload(t, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// checkPayload checks raw against t's fields.
func checkPayload(t *EventType, raw json.RawMessage) error {
	members, err := objectMembers(raw)
	if err != nil {
		return err
	}
	if hasNull(raw) {
		return fmt.Errorf("%w: null is not allowed (omit the field)", ErrInvalidPayload)
	}
	for name, v := range members {
		f, ok := t.field(name)
		if !ok {
			return fmt.Errorf("%w: unknown field %q", ErrInvalidPayload, name)
		}
		if !kindOK(f.Kind, v) {
			return fmt.Errorf("%w: field %q is not of kind %s", ErrInvalidPayload, name, f.Kind)
		}
	}
	for _, f := range t.fields {
		if _, ok := members[f.Name]; f.Required && !ok {
			return fmt.Errorf("%w: required field %q missing", ErrInvalidPayload, f.Name)
		}
	}
	return nil
}

// objectMembers decodes the top level of a JSON object, failing for anything else.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidPayload)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPayload, err)
	}
	return members, nil
}

// hasNull reports whether valid JSON contains a null: outside strings, the only bare n is the
// start of null.
func hasNull(raw []byte) bool {
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == 'n':
			return true
		}
	}
	return false
}

// kindOK reports whether the JSON value v (valid, without null) has kind k.
func kindOK(k FieldKind, v json.RawMessage) bool {
	switch k {
	case KindID:
		return isID(v)
	case KindIDs:
		var items []json.RawMessage
		if v[0] != '[' || json.Unmarshal(v, &items) != nil {
			return false
		}
		for _, it := range items {
			if !isID(it) {
				return false
			}
		}
		return true
	case KindString:
		return v[0] == '"'
	case KindInt:
		if bytes.ContainsAny(v, ".eE") {
			return false
		}
		_, err := strconv.ParseInt(string(v), 10, 64)
		return err == nil
	case KindBool:
		return string(v) == "true" || string(v) == "false"
	case KindTime:
		var s string
		if v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return false
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case KindObject:
		return v[0] == '{'
	case KindList:
		return v[0] == '['
	case KindStrings:
		var items []json.RawMessage
		if v[0] != '[' || json.Unmarshal(v, &items) != nil {
			return false
		}
		for _, it := range items {
			if it[0] != '"' {
				return false
			}
		}
		return true
	case KindValue:
		return true
	}
	return false
}

// isID reports whether v is a JSON string holding a canonical, non-nil UUID.
func isID(v json.RawMessage) bool {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u != uuid.Nil && u.String() == s
}

func encodeTrace(tc map[string]string) (json.RawMessage, error) {
	if len(tc) == 0 {
		return nil, nil
	}
	for k, v := range tc {
		if !traceKeys[k] {
			return nil, fmt.Errorf("%w: key %q (want traceparent or tracestate)", ErrInvalidTraceContext, k)
		}
		if v == "" || len(v) > MaxTraceValueLen {
			return nil, fmt.Errorf("%w: %s must have 1 to %d bytes", ErrInvalidTraceContext, k, MaxTraceValueLen)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return nil, fmt.Errorf("%w: %s has a character outside printable ASCII", ErrInvalidTraceContext, k)
			}
		}
	}
	b, err := json.Marshal(tc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTraceContext, err)
	}
	return b, nil
}

// RedactedPayload reduces a stored payload of type typ to its KindID fields, in register
// order, as the log keeps it once the event is redacted. ErrUnregisteredType for an unknown
// type, ErrInvalidPayload when payload is not a JSON object.
func RedactedPayload(typ string, payload json.RawMessage) (json.RawMessage, error) {
	t, ok := byName[typ]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnregisteredType, typ)
	}
	members, err := objectMembers(payload)
	if err != nil {
		return nil, fmt.Errorf("redact %s: %w", typ, err)
	}
	out := []byte{'{'}
	for _, f := range t.fields {
		v, ok := members[f.Name]
		if f.Kind != KindID || !ok {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsontext.AppendString(out, f.Name, false)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}
