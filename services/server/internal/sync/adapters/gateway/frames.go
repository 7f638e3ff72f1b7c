package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

// Op names a frame (its op member).
type Op string

// The client ops of spec 03; any other op closes the connection with CloseBadFrame.
const (
	// OpAuth authenticates a connection whose upgrade carried no Authorization header; it
	// must be the first frame.
	OpAuth Op = "auth"
	// OpHello starts a fresh client: the server answers ready with a snapshot.
	OpHello Op = "hello"
	// OpResume continues from a cursor: catch-up, catchup.complete, then live events.
	OpResume Op = "resume"
	// OpPing asks for a pong frame.
	OpPing Op = "ping"
	// OpAck acknowledges the events of the durable consumer the connection resumed with, up
	// to its seq: answered by acked.
	OpAck Op = "ack"
	// OpHeartbeat, from a client, is an agent's heartbeat (spec 03, "Presence"), handed to
	// Deps.Heartbeats; not answered. The server sends a frame of the same op (below).
)

// The server ops.
const (
	// OpReady carries the snapshot; live events after its head_seq follow.
	OpReady Op = "ready"
	// OpEvent carries one event envelope.
	OpEvent Op = "event"
	// OpCursor says that everything up to its cursor was checked.
	OpCursor Op = "cursor"
	// OpCatchUpComplete says that catch-up reached the head; live events follow.
	OpCatchUpComplete Op = "catchup.complete"
	// OpResyncRequired says the cursor cannot be served; the server then closes with
	// CloseResyncRequired.
	OpResyncRequired Op = "resync_required"
	// OpError carries a problem code; a fatal one is followed by a close.
	OpError Op = "error"
	// OpPong answers ping.
	OpPong Op = "pong"
	// OpHeartbeat is sent every gateway.heartbeat_interval when the cursor has not moved,
	// so that a client (a browser cannot see WebSocket pings) notices a dead connection. An
	// agent sends a frame of the same op to report that it is alive (see the client ops).
	OpHeartbeat Op = "heartbeat"
	// OpAcked answers ack with the consumer's acked_seq after it.
	OpAcked Op = "acked"
)

// ClientFrame is one decoded client frame.
type ClientFrame struct {
	// Op is the frame's op, one of OpAuth, OpHello, OpResume, OpPing, OpAck and OpHeartbeat.
	Op Op
	// Token is the bearer token of an auth frame.
	Token string
	// After is the cursor of a resume frame (at least 0).
	After int64
	// Epoch is the sync epoch of a resume frame; the zero value when the frame has none.
	Epoch syncmod.CursorEpoch
	// Consumer is the durable consumer a resume frame continues from instead of after and
	// epoch (its acked_seq and sync epoch); empty when the frame names none.
	Consumer string
	// Seq is the seq an ack frame acknowledges up to (at least 0).
	Seq int64
	// BillingMode is the reported_billing_mode of a heartbeat frame when HasBillingMode (else
	// the mode reported before stays). Its length and characters are the agents module's to
	// judge, as for sendAgentHeartbeat.
	BillingMode string
	// HasBillingMode tells whether the heartbeat frame has reported_billing_mode.
	HasBillingMode bool
}

// ErrUnknownOp is wrapped by DecodeClientFrame's error for a well-formed frame whose op the
// server does not know.
var ErrUnknownOp = errors.New("unknown op")

// DecodeClientFrame decodes one client frame strictly: valid UTF-8, exactly one JSON object
// without duplicate member names and without trailing data, a string op of spec 03, and the
// op's members with their types (auth: a non-empty token; resume: an integer after of at
// least 0 and an optional epoch UUID; heartbeat: an optional string reported_billing_mode). Members the op does not use are ignored, so clients
// may send more than this server knows; a member it uses may not be null. Every error is a
// problem.Validation naming the member (op, token, after, epoch, or frame for the shape);
// one for an unknown op also wraps ErrUnknownOp. The caller bounds len(data)
// (gateway.max_frame_bytes).
func DecodeClientFrame(data []byte) (ClientFrame, error) {
	members, err := objectMembers(data)
	if err != nil {
		return ClientFrame{}, problem.Validation(problem.FieldError{Field: "frame", Message: err.Error()})
	}
	var f ClientFrame
	op, err := stringMember(members, "op", true)
	if err != nil {
		return ClientFrame{}, err
	}
	f.Op = Op(op)
	switch f.Op {
	case OpHello, OpPing:
	case OpAuth:
		if f.Token, err = stringMember(members, "token", true); err != nil {
			return ClientFrame{}, err
		}
		if f.Token == "" {
			return ClientFrame{}, invalid("token", "must not be empty")
		}
	case OpAck:
		if f.Seq, err = intMember(members, "seq"); err != nil {
			return ClientFrame{}, err
		}
	case OpHeartbeat:
		if _, ok := members["reported_billing_mode"]; ok {
			if f.BillingMode, err = stringMember(members, "reported_billing_mode", true); err != nil {
				return ClientFrame{}, err
			}
			f.HasBillingMode = true
		}
	case OpResume:
		if _, ok := members["consumer"]; ok {
			return consumerResume(members)
		}
		if f.After, err = afterMember(members); err != nil {
			return ClientFrame{}, err
		}
		epoch, err := stringMember(members, "epoch", false)
		if err != nil {
			return ClientFrame{}, err
		}
		if _, ok := members["epoch"]; ok {
			// Parsed as the REST parameter is (uuid.Parse), and never judged here: any UUID,
			// the nil one included, goes to Check, which answers epoch_changed for every
			// epoch but the instance's, on both transports alike.
			id, perr := uuid.Parse(epoch)
			if perr != nil {
				return ClientFrame{}, invalid("epoch", "must be a UUID")
			}
			f.Epoch = syncmod.EpochOf(id)
		}
	default:
		return ClientFrame{}, fmt.Errorf("%w: %w", ErrUnknownOp,
			invalid("op", "must be one of auth, hello, resume, ping, ack, heartbeat"))
	}
	return f, nil
}

// invalid is a validation problem naming one member of the frame.
func invalid(field, msg string) error {
	return problem.Validation(problem.FieldError{Field: field, Message: msg})
}

// objectMembers splits a JSON object into its members, refusing invalid UTF-8, anything but
// one object, duplicate names and trailing data.
func objectMembers(data []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("is not a JSON object")
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("is not valid JSON")
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("is not valid JSON")
		}
		if _, dup := members[name]; dup {
			return nil, errors.New("has a member twice")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("is not valid JSON")
		}
		members[name] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("has data after the object")
	}
	return members, nil
}

// stringMember returns the string member name; a missing one is an error when required and
// "" otherwise; null or another type is an error.
func stringMember(members map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := members[name]
	if !ok {
		if required {
			return "", invalid(name, "is required")
		}
		return "", nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", invalid(name, "must be a string")
	}
	return s, nil
}

// afterMember returns the required integer member after, at least 0.
func afterMember(members map[string]json.RawMessage) (int64, error) {
	return intMember(members, "after")
}

// intMember returns the required integer member name, at least 0.
func intMember(members map[string]json.RawMessage, name string) (int64, error) {
	raw, ok := members[name]
	if !ok {
		return 0, invalid(name, "is required")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, invalid(name, "must be an integer")
	}
	if n < 0 {
		return 0, invalid(name, "must be at least 0")
	}
	return n, nil
}

// consumerResume decodes a resume frame that names a durable consumer: a non-empty string
// consumer, and neither after nor epoch (the consumer's own acked_seq and epoch are the
// cursor; the name's form is the use case's to judge).
func consumerResume(members map[string]json.RawMessage) (ClientFrame, error) {
	name, err := stringMember(members, "consumer", true)
	if err != nil {
		return ClientFrame{}, err
	}
	if name == "" {
		return ClientFrame{}, invalid("consumer", "must not be empty")
	}
	for _, m := range []string{"after", "epoch"} {
		if _, ok := members[m]; ok {
			return ClientFrame{}, invalid(m, "must be absent when consumer is given")
		}
	}
	return ClientFrame{Op: OpResume, Consumer: name}, nil
}

// ackedFrame is {"op":"acked","consumer":name,"acked_seq":n}.
func ackedFrame(name string, acked int64) []byte {
	b, _ := json.Marshal(struct { //nolint:errchkjson // a string and an integer; cannot fail
		Op       Op     `json:"op"`
		Consumer string `json:"consumer"`
		AckedSeq int64  `json:"acked_seq"`
	}{Op: OpAcked, Consumer: name, AckedSeq: acked})
	return b
}

// The server frames. Event and cursor frames, the ones sent per event and per connection,
// are built by appending; the rare ones are marshalled.

// appendEventFrame appends {"op":"event","event":envelope} to dst.
func appendEventFrame(dst []byte, envelope json.RawMessage) []byte {
	dst = append(dst, `{"op":"event","event":`...)
	dst = append(dst, envelope...)
	return append(dst, '}')
}

// cursorFrame is {"op":op,"cursor":n} for OpCursor and OpCatchUpComplete.
func cursorFrame(op Op, n int64) []byte {
	b := make([]byte, 0, 48)
	b = append(b, `{"op":"`...)
	b = append(b, op...)
	b = append(b, `","cursor":`...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '}')
}

// readyFrame is {"op":"ready","snapshot":snapshot}.
func readyFrame(snapshot []byte) []byte {
	b := make([]byte, 0, len(snapshot)+32)
	b = append(b, `{"op":"ready","snapshot":`...)
	b = append(b, snapshot...)
	return append(b, '}')
}

// Frames without members.
var (
	pongFrame      = []byte(`{"op":"pong"}`)
	heartbeatFrame = []byte(`{"op":"heartbeat"}`)
)

// resyncFrame is the resync_required frame: the members of the HTTP 410 body (spec 03).
func resyncFrame(c syncmod.CheckResult) []byte {
	b, _ := json.Marshal(struct { //nolint:errchkjson // strings and integers only; cannot fail
		Op           Op     `json:"op"`
		Reason       string `json:"reason"`
		Recovery     string `json:"recovery"`
		RetryAfterMS int64  `json:"retry_after_ms"`
		HeadSeq      int64  `json:"head_seq"`
		SyncEpoch    string `json:"sync_epoch"`
		OldestSeq    int64  `json:"oldest_seq"`
	}{
		Op: OpResyncRequired, Reason: string(c.Reason), Recovery: string(c.Recovery),
		RetryAfterMS: c.RetryAfter.Milliseconds(), HeadSeq: c.HeadSeq, SyncEpoch: c.SyncEpoch.String(),
		OldestSeq: c.OldestSeq(),
	})
	return b
}

// errorFrame is the error frame of a problem: its code and detail as the REST API would
// answer them, and the invalid members of a validation_failed.
func errorFrame(p problem.Problem) []byte {
	return retryErrorFrame(p, 0)
}

// retryErrorFrame is errorFrame with retry_after_ms, when it is more than 0: how long the
// client waits before it reconnects (an unavailable database).
func retryErrorFrame(p problem.Problem, retryAfterMS int64) []byte {
	b, _ := json.Marshal(struct { //nolint:errchkjson // strings and integers only; cannot fail
		Op           Op                   `json:"op"`
		Code         string               `json:"code"`
		Detail       string               `json:"detail"`
		Errors       []problem.FieldError `json:"errors,omitempty"`
		RetryAfterMS int64                `json:"retry_after_ms,omitempty"`
	}{Op: OpError, Code: p.Code, Detail: p.Detail, Errors: p.Errors, RetryAfterMS: retryAfterMS})
	return b
}
