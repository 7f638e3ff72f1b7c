package gateway_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

func TestDecodeClientFrame(t *testing.T) {
	t.Parallel()
	ep := uuid.MustParse("0193a1c2-7c00-7a01-8000-00000000e0c0")
	for _, tc := range []struct {
		name string
		in   string
		want gateway.ClientFrame
	}{
		{"hello", `{"op":"hello"}`, gateway.ClientFrame{Op: gateway.OpHello}},
		{"ping with white space", " {\n\"op\" : \"ping\" }\n", gateway.ClientFrame{Op: gateway.OpPing}},
		{"auth", `{"op":"auth","token":"bothy_abc"}`, gateway.ClientFrame{Op: gateway.OpAuth, Token: "bothy_abc"}},
		{"resume", `{"op":"resume","after":1234,"epoch":"` + ep.String() + `"}`, gateway.ClientFrame{Op: gateway.OpResume, After: 1234, Epoch: syncmod.EpochOf(ep)}},
		{"resume with the nil UUID: given, for Check to refuse", `{"op":"resume","after":3,"epoch":"00000000-0000-0000-0000-000000000000"}`, gateway.ClientFrame{Op: gateway.OpResume, After: 3, Epoch: syncmod.EpochOf(uuid.Nil)}},
		{"resume without epoch", `{"op":"resume","after":0}`, gateway.ClientFrame{Op: gateway.OpResume}},
		{"resume at the largest cursor", `{"op":"resume","after":9223372036854775807}`, gateway.ClientFrame{Op: gateway.OpResume, After: 1<<63 - 1}},
		{"extra members are ignored", `{"op":"hello","client":{"name":"web","v":[1,null]},"after":"x"}`, gateway.ClientFrame{Op: gateway.OpHello}},
		{"resume with a consumer", `{"op":"resume","consumer":"main"}`, gateway.ClientFrame{Op: gateway.OpResume, Consumer: "main"}},
		{"ack", `{"op":"ack","seq":42}`, gateway.ClientFrame{Op: gateway.OpAck, Seq: 42}},
		{"ack at 0", `{"op":"ack","seq":0}`, gateway.ClientFrame{Op: gateway.OpAck}},
		{"heartbeat", `{"op":"heartbeat"}`, gateway.ClientFrame{Op: gateway.OpHeartbeat}},
		{"heartbeat with a billing mode", `{"op":"heartbeat","reported_billing_mode":"subscription"}`, gateway.ClientFrame{Op: gateway.OpHeartbeat, BillingMode: "subscription", HasBillingMode: true}},
		{"heartbeat with an empty billing mode", `{"op":"heartbeat","reported_billing_mode":""}`, gateway.ClientFrame{Op: gateway.OpHeartbeat, HasBillingMode: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gateway.DecodeClientFrame([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Errorf("DecodeClientFrame(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestDecodeClientFrameRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, field string
		unknownOp       bool
	}{
		{"empty", ``, "frame", false},
		{"not JSON", `hello`, "frame", false},
		{"a string", `"hello"`, "frame", false},
		{"an array", `[{"op":"hello"}]`, "frame", false},
		{"null", `null`, "frame", false},
		{"unterminated", `{"op":"hello"`, "frame", false},
		{"trailing object", `{"op":"hello"} {}`, "frame", false},
		{"trailing garbage", `{"op":"hello"}x`, "frame", false},
		{"duplicate", `{"op":"hello","op":"hello"}`, "frame", false},
		{"invalid UTF-8", "{\"op\":\"hel\xfflo\"}", "frame", false},
		{"no op", `{}`, "op", false},
		{"op null", `{"op":null}`, "op", false},
		{"op a number", `{"op":1}`, "op", false},
		{"unknown op", `{"op":"subscribe"}`, "op", true},
		{"op in another case", `{"op":"Hello"}`, "op", true},
		{"auth without token", `{"op":"auth"}`, "token", false},
		{"auth empty token", `{"op":"auth","token":""}`, "token", false},
		{"auth token a number", `{"op":"auth","token":5}`, "token", false},
		{"resume without after", `{"op":"resume"}`, "after", false},
		{"resume after negative", `{"op":"resume","after":-5}`, "after", false},
		{"resume after fraction", `{"op":"resume","after":1.0}`, "after", false},
		{"resume after exponent", `{"op":"resume","after":1e3}`, "after", false},
		{"resume after string", `{"op":"resume","after":"12"}`, "after", false},
		{"resume after too large", `{"op":"resume","after":9223372036854775808}`, "after", false},
		{"resume epoch not a uuid", `{"op":"resume","after":1,"epoch":"0193"}`, "epoch", false},
		{"resume epoch null", `{"op":"resume","after":1,"epoch":null}`, "epoch", false},
		{"resume consumer empty", `{"op":"resume","consumer":""}`, "consumer", false},
		{"resume consumer a number", `{"op":"resume","consumer":7}`, "consumer", false},
		{"resume consumer null", `{"op":"resume","consumer":null}`, "consumer", false},
		{"resume consumer and after", `{"op":"resume","consumer":"main","after":1}`, "after", false},
		{"resume consumer and epoch", `{"op":"resume","consumer":"main","epoch":"0193a1c2-7c00-7a01-8000-00000000e0c0"}`, "epoch", false},
		{"ack without seq", `{"op":"ack"}`, "seq", false},
		{"ack seq negative", `{"op":"ack","seq":-1}`, "seq", false},
		{"ack seq fraction", `{"op":"ack","seq":1.5}`, "seq", false},
		{"ack seq string", `{"op":"ack","seq":"1"}`, "seq", false},
		{"heartbeat billing mode null", `{"op":"heartbeat","reported_billing_mode":null}`, "reported_billing_mode", false},
		{"heartbeat billing mode a number", `{"op":"heartbeat","reported_billing_mode":3}`, "reported_billing_mode", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway.DecodeClientFrame([]byte(tc.in))
			if !errors.Is(err, problem.ErrValidation) {
				t.Fatalf("DecodeClientFrame(%q) = %v, want a validation error", tc.in, err)
			}
			if errors.Is(err, gateway.ErrUnknownOp) != tc.unknownOp {
				t.Errorf("unknown op = %v, want %v", errors.Is(err, gateway.ErrUnknownOp), tc.unknownOp)
			}
			p := problem.From(t.Context(), err)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Errorf("errors = %+v, want one naming %s", p.Errors, tc.field)
			}
		})
	}
}

// FuzzDecodeClientFrame feeds the decoder arbitrary bytes: it never panics, refuses with a
// validation error or returns a frame of a known op whose members hold what the frame says.
// Its seed corpus runs with every go test.
func FuzzDecodeClientFrame(f *testing.F) {
	for _, s := range []string{
		`{"op":"hello"}`, `{"op":"ping"}`, `{"op":"auth","token":"t"}`,
		`{"op":"resume","after":12,"epoch":"0193a1c2-7c00-7a01-8000-00000000e0c0"}`,
		`{"op":"resume","after":-1}`, `{"op":"x"}`, `{"op":"hello","op":"hello"}`, `[]`, `{`, ``,
		`{"op":"hello","nested":{"a":[1,2,{"b":null}]}}`, "{\"op\":\"\xff\"}", `{"op":"resume","after":1e2}`,
		`{"op":"ack","seq":3}`, `{"op":"heartbeat","reported_billing_mode":"metered"}`, `{"op":"heartbeat"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := gateway.DecodeClientFrame(data)
		if err != nil {
			if !errors.Is(err, problem.ErrValidation) {
				t.Fatalf("error %v is no validation error", err)
			}
			return
		}
		if !utf8.Valid(data) || !json.Valid(data) {
			t.Fatalf("accepted %q, which is no valid JSON text", data)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted %q, which is no object: %v", data, err)
		}
		switch got.Op {
		case gateway.OpHello, gateway.OpPing:
		case gateway.OpAuth:
			if got.Token == "" {
				t.Fatalf("auth without a token from %q", data)
			}
		case gateway.OpResume:
			if got.After < 0 {
				t.Fatalf("negative cursor from %q", data)
			}
			if _, has := m["epoch"]; has != got.Epoch.Given {
				t.Fatalf("epoch %v from %q", got.Epoch, data)
			}
		case gateway.OpAck:
			if got.Seq < 0 {
				t.Fatalf("negative seq from %q", data)
			}
		case gateway.OpHeartbeat:
			if _, has := m["reported_billing_mode"]; has != got.HasBillingMode {
				t.Fatalf("billing mode %v from %q", got.HasBillingMode, data)
			}
		default:
			t.Fatalf("op %q accepted from %q", got.Op, data)
		}
		if strings.Contains(string(got.Op), `"`) {
			t.Fatalf("op %q", got.Op)
		}
	})
}
