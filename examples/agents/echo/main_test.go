package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParse: flags win over the environment, the environment over the defaults; the token
// comes from -token, else from the token file; bad durations and a missing token refuse.
func TestParse(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("bothy_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(options) bool
		wantErr string
	}{
		{
			name: "defaults with a token from the environment",
			env:  map[string]string{"BOTHY_AGENT_TOKEN": "bothy_env"},
			check: func(o options) bool {
				return o.token == "bothy_env" && o.baseURL == "http://127.0.0.1:8080" && o.cfg.Consumer == "echo" &&
					o.cfg.HeartbeatInterval > 0 && o.cfg.MinBackoff > 0 && o.cfg.MaxBackoff >= o.cfg.MinBackoff && o.cfg.ReplyDelay == 0
			},
		},
		{
			name: "flags win over the environment",
			args: []string{"-url", "http://chat.example.com", "-token", "bothy_flag", "-consumer", "echo-2", "-reply-delay", "2s"},
			env:  map[string]string{"BOTHY_AGENT_TOKEN": "bothy_env", "BOTHY_URL": "http://other.example.com", "ECHO_CONSUMER": "x"},
			check: func(o options) bool {
				return o.token == "bothy_flag" && o.baseURL == "http://chat.example.com" && o.cfg.Consumer == "echo-2" && o.cfg.ReplyDelay == 2*time.Second
			},
		},
		{
			name: "the environment sets durations",
			env:  map[string]string{"BOTHY_AGENT_TOKEN": "t", "ECHO_HEARTBEAT_INTERVAL": "3s", "ECHO_MAX_BACKOFF": "9s"},
			check: func(o options) bool {
				return o.cfg.HeartbeatInterval == 3*time.Second && o.cfg.MaxBackoff == 9*time.Second
			},
		},
		{
			name:  "the token file",
			env:   map[string]string{"BOTHY_AGENT_TOKEN_FILE": file},
			check: func(o options) bool { return o.token == "bothy_fromfile" },
		},
		{name: "no token", wantErr: "no token"},
		{name: "a missing token file", args: []string{"-token-file", filepath.Join(t.TempDir(), "none")}, wantErr: "token file"},
		{name: "backoffs the wrong way round", args: []string{"-token", "t", "-min-backoff", "2s", "-max-backoff", "1s"}, wantErr: "durations"},
		{name: "an unknown flag", args: []string{"-tokn", "t"}, wantErr: "flags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := parse(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse = %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(o) {
				t.Fatalf("parse = %+v, %v", o, err)
			}
		})
	}
}
