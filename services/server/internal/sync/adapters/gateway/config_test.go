package gateway_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

func TestConfigFrom(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	got := gateway.ConfigFrom(cfg)
	want := gateway.Config{
		SendBuffer: 64, HeartbeatInterval: 25 * time.Second, AuthTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, BatchWindow: 15 * time.Millisecond, MaxFrameBytes: 4096,
		RevocationMaxDelay:        250 * time.Millisecond,
		CredentialRecheckInterval: 30 * time.Second,
	}
	if !equalConfig(got, want) {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}

	cfg, err = config.Load("", []string{
		config.HTTPCORSAllowedOrigins.EnvName() + "= https://app.example.com ,,http://localhost:5173",
		gateway.KeySendBuffer.EnvName() + "=8",
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	got = gateway.ConfigFrom(cfg)
	if !slices.Equal(got.AllowedOrigins, []string{"https://app.example.com", "http://localhost:5173"}) || got.SendBuffer != 8 {
		t.Errorf("ConfigFrom = %+v", got)
	}
}

func equalConfig(a, b gateway.Config) bool {
	return a.SendBuffer == b.SendBuffer && a.HeartbeatInterval == b.HeartbeatInterval && a.AuthTimeout == b.AuthTimeout &&
		a.WriteTimeout == b.WriteTimeout && a.BatchWindow == b.BatchWindow && a.MaxFrameBytes == b.MaxFrameBytes && slices.Equal(a.AllowedOrigins, b.AllowedOrigins)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*gateway.Config)
		want string
	}{
		{"send buffer", func(c *gateway.Config) { c.SendBuffer = 0 }, "gateway.send_buffer"},
		{"heartbeat", func(c *gateway.Config) { c.HeartbeatInterval = 0 }, "gateway.heartbeat_interval"},
		{"auth timeout", func(c *gateway.Config) { c.AuthTimeout = -time.Second }, "gateway.auth_timeout"},
		{"write timeout", func(c *gateway.Config) { c.WriteTimeout = 0 }, "gateway.write_timeout"},
		{"frame limit", func(c *gateway.Config) { c.MaxFrameBytes = 63 }, "gateway.max_frame_bytes"},
		{"no revocation delay", func(c *gateway.Config) { c.RevocationMaxDelay = 0 }, "gateway.revocation_max_delay"},
		{"revocation delay above a minute", func(c *gateway.Config) { c.RevocationMaxDelay = time.Minute + 1 }, "gateway.revocation_max_delay"},
		{"no recheck interval", func(c *gateway.Config) { c.CredentialRecheckInterval = 0 }, "gateway.credential_recheck_interval"},
		{"recheck interval above ten minutes", func(c *gateway.Config) { c.CredentialRecheckInterval = 10*time.Minute + 1 }, "gateway.credential_recheck_interval"},
		{"negative batch window", func(c *gateway.Config) { c.BatchWindow = -time.Millisecond }, "gateway.batch_window"},
		{"origin without scheme", func(c *gateway.Config) { c.AllowedOrigins = []string{"app.example.com"} }, "http.cors.allowed_origins"},
		{"origin with a path", func(c *gateway.Config) { c.AllowedOrigins = []string{"https://app.example.com/chat"} }, "http.cors.allowed_origins"},
		{"origin with a wildcard", func(c *gateway.Config) { c.AllowedOrigins = []string{"https://*.example.com"} }, "http.cors.allowed_origins"},
		{"origin with a query", func(c *gateway.Config) { c.AllowedOrigins = []string{"https://app.example.com?x=1"} }, "http.cors.allowed_origins"},
		{"origin with a user", func(c *gateway.Config) { c.AllowedOrigins = []string{"https://sam@app.example.com"} }, "http.cors.allowed_origins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	t.Parallel()
	_, err := gateway.New(gateway.Deps{Config: testConfig()})
	for _, part := range []string{"authenticator", "authorizer", "catch-up", "snapshot", "snapshot encoder", "tail", "delivery"} {
		if err == nil || !strings.Contains(err.Error(), part+" is nil") {
			t.Errorf("New without parts = %v, want it to name %s", err, part)
		}
	}
	bad := testConfig()
	bad.SendBuffer = 0
	if _, err := gateway.New(gateway.Deps{Config: bad}); err == nil || !strings.Contains(err.Error(), "gateway.send_buffer") {
		t.Errorf("New with a bad configuration = %v", err)
	}
}

// TestShutdownGivesUp: a peer that does not answer the close handshake is dropped once the
// shutdown's context ends.
func TestShutdownGivesUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dialAs(t, "sam-token")
	c.send(`{"op":"hello"}`)
	c.expect("ready") // and then it reads no more: no close reply
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.gw.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want the context's error", err)
	}
	if n := e.gw.Connections(); n != 0 {
		t.Errorf("Connections = %d after Shutdown", n)
	}
}
