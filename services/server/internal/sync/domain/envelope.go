package domain

import (
	"bytes"
	"strconv"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/jsontext"
)

// PrincipalRef is the actor of an event as clients see it (spec 05 PrincipalRef). The caller
// resolves it for StoredEvent.ActorID, in batch, through the identity module.
type PrincipalRef struct {
	// ID identifies the principal; uuid.Nil means unresolved, and the event's ActorID is used.
	ID uuid.UUID
	// Kind is person, agent or app, or KindSystem for the instance itself; omitted when empty.
	Kind actor.Kind
	// DisplayName is the principal's display name; omitted when empty.
	DisplayName string
	// Handle is the principal's unique handle; omitted when empty.
	Handle string
}

// KindSystem is the kind of the actor of an event no principal caused (spec 03, actor): an
// operator's change at the command line, the instance's own work. Such an event is appended with
// the instance's id as its actor, and named {id, kind: system, display_name: the instance's
// name}. No request ever authenticates as it: it is a kind of envelope actor, not of caller.
const KindSystem actor.Kind = "system"

// ReceiverKind is the kind of principal an envelope is encoded for: only agents receive the
// trace context, so the same event encodes differently for them.
type ReceiverKind string

// The receiver kinds, spelled like actor.Kind, so ReceiverKind(a.Kind) converts.
const (
	// ReceiverPerson is a human user.
	ReceiverPerson ReceiverKind = ReceiverKind(actor.KindPerson)
	// ReceiverAgent is an AI agent; it gets trace_context when the event has one.
	ReceiverAgent ReceiverKind = ReceiverKind(actor.KindAgent)
	// ReceiverApp is an integration.
	ReceiverApp ReceiverKind = ReceiverKind(actor.KindApp)
)

// occurredAtLayout is RFC 3339 in UTC with microseconds, PostgreSQL's precision, always six
// digits so that envelopes of one second sort as text.
const occurredAtLayout = "2006-01-02T15:04:05.000000Z07:00"

// AppendEnvelope appends the JSON envelope of e (spec 03) for a receiver of kind receiver to dst
// and returns the extended slice. It is the one encoder behind REST and the gateway. The output
// is one compact JSON object with its members in this order:
//
//	seq, id, type, occurred_at, actor, space_id, channel_id, thread_id, resource, payload,
//	redacted, correlation_id, trace_context
//
// and never contains null: actor is {id, kind, display_name, handle} with empty strings
// omitted (id is e.ActorID when ref is unresolved; no actor at all when both are nil);
// space_id, channel_id and thread_id appear only when set; resource is always {kind, id};
// payload is e.Payload byte for byte, never re-parsed ({} when empty or null); redacted appears,
// as true, only for a redacted event; correlation_id only when set; trace_context only when the
// receiver is an agent and the event has a non-empty one, byte for byte. occurred_at is RFC 3339
// in UTC with six fractional digits. Strings are escaped as JSON requires (no HTML escaping);
// invalid UTF-8 becomes U+FFFD.
//
// Payload and TraceContext must be JSON objects without null, as Encode guarantees on the way
// in; they are not checked again here.
func AppendEnvelope(dst []byte, e StoredEvent, ref PrincipalRef, receiver ReceiverKind) []byte {
	return AppendDeliveredEnvelope(dst, e, ref, receiver, DeliveryOnly{})
}

// DeliveryOnly are the envelope members that exist only on one delivery of an event to one
// receiver and never in the log (spec 03, "Delivery-only fields"): an invocation.requested
// delivered to its agent carries the invocation's token and whether it is a redelivery.
type DeliveryOnly struct {
	// InvocationToken is the opaque token the agent acknowledges or answers the invocation
	// with; empty for none (the member is omitted).
	InvocationToken string
	// Redelivered is true when the invocation is delivered again (its attempt is above 1); the
	// member appears only with a token.
	Redelivered bool
}

// AppendDeliveredEnvelope is AppendEnvelope with the delivery-only members of only appended
// last (invocation_token and redelivered, only when only has a token and the receiver is an
// agent, the only kind invocations are delivered to).
func AppendDeliveredEnvelope(dst []byte, e StoredEvent, ref PrincipalRef, receiver ReceiverKind, only DeliveryOnly) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"id":`...)
	dst = jsontext.AppendUUID(dst, e.ID)
	dst = append(dst, `,"type":`...)
	dst = jsontext.AppendString(dst, e.Type, false)
	dst = append(dst, `,"occurred_at":"`...)
	dst = appendOccurredAt(dst, e.OccurredAt)
	dst = append(dst, '"')
	dst = appendActor(dst, e.ActorID, ref)
	dst = appendOptionalID(dst, `,"space_id":`, e.SpaceID)
	dst = appendOptionalID(dst, `,"channel_id":`, e.ChannelID)
	dst = appendOptionalID(dst, `,"thread_id":`, e.ThreadID)
	dst = append(dst, `,"resource":{"kind":`...)
	dst = jsontext.AppendString(dst, string(e.ResourceKind), false)
	dst = append(dst, `,"id":`...)
	dst = jsontext.AppendUUID(dst, e.ResourceID)
	dst = append(dst, `},"payload":`...)
	if present(e.Payload) {
		dst = append(dst, e.Payload...)
	} else {
		dst = append(dst, `{}`...)
	}
	if e.Redacted {
		dst = append(dst, `,"redacted":true`...)
	}
	if e.CorrelationID != "" {
		dst = append(dst, `,"correlation_id":`...)
		dst = jsontext.AppendString(dst, e.CorrelationID, false)
	}
	if receiver == ReceiverAgent && present(e.TraceContext) && !isEmptyObject(e.TraceContext) {
		dst = append(dst, `,"trace_context":`...)
		dst = append(dst, e.TraceContext...)
	}
	if receiver == ReceiverAgent && only.InvocationToken != "" {
		dst = append(dst, `,"invocation_token":`...)
		dst = jsontext.AppendString(dst, only.InvocationToken, false)
		dst = append(dst, `,"redelivered":`...)
		dst = strconv.AppendBool(dst, only.Redelivered)
	}
	return append(dst, '}')
}

// appendOccurredAt appends t in UTC as occurredAtLayout writes it, digit by digit: formatting
// through the layout cost a catch-up page of 500 events about a tenth of its encoding (make
// bench). Years outside 0 to 9999, which the fixed digits cannot hold, go through the layout.
func appendOccurredAt(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, occurredAtLayout)
	}
	hour, minute, second := t.Clock()
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, second, 2)
	dst = append(dst, '.')
	dst = appendDigits(dst, t.Nanosecond()/1000, 6)
	return append(dst, 'Z')
}

// appendDigits appends n (at least 0) as exactly width decimal digits, zero-padded.
func appendDigits(dst []byte, n, width int) []byte {
	var b [8]byte
	for i := width - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, b[:width]...)
}

func appendActor(dst []byte, actorID uuid.UUID, ref PrincipalRef) []byte {
	id := ref.ID
	if id == uuid.Nil {
		id = actorID
	}
	if id == uuid.Nil {
		return dst
	}
	dst = append(dst, `,"actor":{"id":`...)
	dst = jsontext.AppendUUID(dst, id)
	for _, m := range []struct{ name, value string }{
		{`,"kind":`, string(ref.Kind)},
		{`,"display_name":`, ref.DisplayName},
		{`,"handle":`, ref.Handle},
	} {
		if m.value != "" {
			dst = append(dst, m.name...)
			dst = jsontext.AppendString(dst, m.value, false)
		}
	}
	return append(dst, '}')
}

func appendOptionalID(dst []byte, member string, id uuid.UUID) []byte {
	if id == uuid.Nil {
		return dst
	}
	dst = append(dst, member...)
	return jsontext.AppendUUID(dst, id)
}

// present reports whether raw holds a JSON value other than null.
func present(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// isEmptyObject reports whether raw is {} (possibly with white space inside).
func isEmptyObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}
