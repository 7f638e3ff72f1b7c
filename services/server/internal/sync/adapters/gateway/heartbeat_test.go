package gateway_test

import (
	"slices"
	"testing"

	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// TestAgentHeartbeatFrame: an agent's heartbeat frame, before hello and after the start, is
// handed to Deps.Heartbeats with the agent in the context and its billing mode, and answered
// by nothing (the next ping's pong is the next frame).
func TestAgentHeartbeatFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dialAs(t, "helper-token")
	c.send(`{"op":"heartbeat","reported_billing_mode":"subscription"}`)
	c.send(`{"op":"ping"}`)
	c.expect("pong")
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	c.send(`{"op":"heartbeat"}`)
	c.send(`{"op":"ping"}`)
	c.expect("pong")
	want := []heartbeatCall{{principal: helper, mode: "subscription", hasMode: true}, {principal: helper}}
	if got := e.beats.recorded(); !slices.Equal(got, want) {
		t.Fatalf("heartbeats recorded %+v, want %+v", got, want)
	}
}

// TestAgentHeartbeatFrameRefused: a heartbeat frame of a principal that is no agent is a bad
// frame (validation_failed naming op, close 4000) that never reaches the agents module; a
// billing mode the module refuses is one too; any other failure closes as failed decides.
func TestAgentHeartbeatFrameRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token string
		fail        error
		code        string
		close       int
	}{
		{"a person", "alex-token", nil, "validation_failed", int(gateway.CloseBadFrame)},
		{"a refused billing mode", "helper-token", problem.Validation(problem.FieldError{Field: "reported_billing_mode", Message: "too long"}), "validation_failed", int(gateway.CloseBadFrame)},
		{"the database away", "helper-token", problem.ErrUnavailable, "unavailable", int(gateway.CloseTryAgainLater)},
		{"a failure", "helper-token", errFake, "internal", int(gateway.CloseInternal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tc.fail != nil {
				e.beats.fail(tc.fail)
			}
			c := e.dialAs(t, tc.token)
			c.send(`{"op":"hello"}`)
			c.expect("ready")
			c.send(`{"op":"heartbeat","reported_billing_mode":"metered"}`)
			if f := c.expect("error"); f.Code != tc.code {
				t.Errorf("error frame %s, want code %s", f.raw, tc.code)
			}
			if got := int(c.closed()); got != tc.close {
				t.Errorf("closed with %d, want %d", got, tc.close)
			}
			if got := e.beats.recorded(); len(got) != 0 {
				t.Errorf("heartbeats recorded %+v, want none", got)
			}
		})
	}
}
