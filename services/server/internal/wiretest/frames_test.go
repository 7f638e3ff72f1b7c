package wiretest_test

import (
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/wiretest"
)

// TestFrameSchemasAreSpec03 holds the AsyncAPI document to spec 03's frame tables: six
// client frames (an agent's heartbeat among them), nine server frames (ack and acked of
// durable consumers, ADR 0026), no op twice in one direction.
func TestFrameSchemasAreSpec03(t *testing.T) {
	t.Parallel()
	f, err := wiretest.FrameSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wiretest.Ops(f.Client), []string{"ack", "auth", "heartbeat", "hello", "ping", "resume"}; !slices.Equal(got, want) {
		t.Errorf("client frames %v, want %v", got, want)
	}
	want := []string{"acked", "catchup.complete", "cursor", "error", "event", "heartbeat", "pong", "ready", "resync_required"}
	if got := wiretest.Ops(f.Server); !slices.Equal(got, want) {
		t.Errorf("server frames %v, want %v", got, want)
	}
}

func TestValidateFrames(t *testing.T) {
	t.Parallel()
	const ev = `"seq":3,"id":"01938d2a-7c00-7a01-8000-0000000000e1","occurred_at":"2026-12-01T09:30:15.123456Z",` +
		`"actor":{"id":"01938d2a-7c00-7a01-8000-0000000000a1","kind":"person","display_name":"Alex","handle":"alex"},` +
		`"resource":{"kind":"instance","id":"01938d2a-7c00-7a01-8000-0000000000b1"},`
	tests := []struct {
		name, frame string
		client      bool
		wantErr     string // "" means valid
	}{
		{name: "heartbeat", frame: `{"op":"heartbeat"}`},
		{name: "cursor", frame: `{"op":"cursor","cursor":12}`},
		{name: "cursor negative", frame: `{"op":"cursor","cursor":-1}`, wantErr: "cursor frame"},
		{name: "catchup.complete without cursor", frame: `{"op":"catchup.complete"}`, wantErr: "catchup.complete frame"},
		{name: "unknown op", frame: `{"op":"welcome"}`, wantErr: "none of"},
		{name: "client op from the server", frame: `{"op":"hello"}`, wantErr: "none of"},
		{name: "null", frame: `{"op":"cursor","cursor":null}`, wantErr: "null at $.cursor"},
		{name: "event", frame: `{"op":"event","event":{` + ev + `"type":"flags.updated","payload":{"keys":["threads"]}}}`},
		{name: "event with a payload of another type", frame: `{"op":"event","event":{` + ev + `"type":"flags.updated","payload":{"space_id":"01938d2a-7c00-7a01-8000-0000000000b1"}}}`, wantErr: "event frame"},
		{name: "event of no registered type", frame: `{"op":"event","event":{` + ev + `"type":"flags.renamed","payload":{"keys":[]}}}`, wantErr: "event frame"},
		{name: "redacted event", frame: `{"op":"event","event":{` + ev + `"type":"flags.updated","payload":{},"redacted":true}}`},
		{name: "resync", frame: `{"op":"resync_required","reason":"retention","recovery":"snapshot","retry_after_ms":812,"head_seq":90,"sync_epoch":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70","oldest_seq":41}`},
		{name: "resync with an unknown reason", frame: `{"op":"resync_required","reason":"bored","recovery":"snapshot","retry_after_ms":812,"head_seq":90,"sync_epoch":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70","oldest_seq":41}`, wantErr: "resync_required frame"},
		{name: "error", frame: `{"op":"error","code":"validation_failed","detail":"The request is not valid.","errors":[{"field":"after","message":"must be at least 0"}]}`},
		{name: "error without detail", frame: `{"op":"error","code":"internal"}`, wantErr: "error frame"},
		{name: "resume", frame: `{"op":"resume","after":0,"epoch":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70"}`, client: true},
		{name: "resume without after", frame: `{"op":"resume"}`, client: true, wantErr: "resume frame"},
		{name: "resume of a consumer", frame: `{"op":"resume","consumer":"replies"}`, client: true},
		{name: "resume of a consumer and a cursor", frame: `{"op":"resume","consumer":"replies","after":3}`, client: true, wantErr: "resume frame"},
		{name: "resume of a consumer with an epoch", frame: `{"op":"resume","consumer":"replies","epoch":"0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e70"}`, client: true, wantErr: "resume frame"},
		{name: "ack", frame: `{"op":"ack","seq":12}`, client: true},
		{name: "ack without seq", frame: `{"op":"ack"}`, client: true, wantErr: "ack frame"},
		{name: "acked", frame: `{"op":"acked","consumer":"replies","acked_seq":12}`},
		{name: "agent heartbeat", frame: `{"op":"heartbeat","reported_billing_mode":"subscription"}`, client: true},
		{name: "agent heartbeat without billing mode", frame: `{"op":"heartbeat"}`, client: true},
		{name: "agent heartbeat with a numeric billing mode", frame: `{"op":"heartbeat","reported_billing_mode":3}`, client: true, wantErr: "heartbeat frame"},
		{name: "auth with an empty token", frame: `{"op":"auth","token":""}`, client: true, wantErr: "auth frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			validate := wiretest.ValidateServerFrame
			if tt.client {
				validate = wiretest.ValidateClientFrame
			}
			err := validate([]byte(tt.frame))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("want an error with %q, got none", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("want an error with %q, got %v", tt.wantErr, err)
			}
		})
	}
}
