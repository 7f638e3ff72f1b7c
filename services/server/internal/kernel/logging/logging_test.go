package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// lines decodes every JSON line written to buf.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestNewAddsRequestID(t *testing.T) {
	t.Parallel()
	ctx := correlation.With(context.Background(), "req-sam-7")
	tests := []struct {
		name  string
		log   func(l *slog.Logger)
		check func(t *testing.T, m map[string]any)
	}{
		{
			name: "context record gets the id",
			log:  func(l *slog.Logger) { l.InfoContext(ctx, "hello", "user", "sam") },
			check: func(t *testing.T, m map[string]any) {
				if m["request_id"] != "req-sam-7" || m["user"] != "sam" || m["msg"] != "hello" {
					t.Fatalf("line = %v", m)
				}
			},
		},
		{
			name: "no id in context adds nothing",
			log:  func(l *slog.Logger) { l.InfoContext(context.Background(), "hello") },
			check: func(t *testing.T, m map[string]any) {
				if _, ok := m["request_id"]; ok {
					t.Fatalf("unexpected request_id in %v", m)
				}
			},
		},
		{
			name: "record id wins",
			log:  func(l *slog.Logger) { l.InfoContext(ctx, "hello", "request_id", "req-robin-1") },
			check: func(t *testing.T, m map[string]any) {
				if m["request_id"] != "req-robin-1" {
					t.Fatalf("line = %v", m)
				}
			},
		},
		{
			name: "logger id wins",
			log:  func(l *slog.Logger) { l.With("request_id", "req-robin-2").InfoContext(ctx, "hello") },
			check: func(t *testing.T, m map[string]any) {
				if m["request_id"] != "req-robin-2" {
					t.Fatalf("line = %v", m)
				}
			},
		},
		{
			name: "grouped logger keeps the id at the top level",
			log: func(l *slog.Logger) {
				l.With("component", "sync").WithGroup("http").With("method", "GET").WithGroup("").InfoContext(ctx, "hello", "path", "/api/v1/me")
			},
			check: func(t *testing.T, m map[string]any) {
				if m["request_id"] != "req-sam-7" || m["component"] != "sync" {
					t.Fatalf("line = %v", m)
				}
				g, ok := m["http"].(map[string]any)
				if !ok || g["method"] != "GET" || g["path"] != "/api/v1/me" {
					t.Fatalf("group = %v", m["http"])
				}
			},
		},
		{
			name: "grouped logger without id",
			log:  func(l *slog.Logger) { l.WithGroup("http").InfoContext(context.Background(), "hello", "path", "/") },
			check: func(t *testing.T, m map[string]any) {
				if _, ok := m["request_id"]; ok {
					t.Fatalf("unexpected request_id in %v", m)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			tt.log(logging.New(&buf, slog.LevelInfo))
			got := lines(t, &buf)
			if len(got) != 1 {
				t.Fatalf("got %d lines, want 1: %s", len(got), buf.String())
			}
			tt.check(t, got[0])
		})
	}
}

func TestNewLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := logging.New(&buf, slog.LevelWarn)
	l.Info("dropped")
	l.Warn("kept")
	got := lines(t, &buf)
	if len(got) != 1 || got[0]["msg"] != "kept" || got[0]["level"] != "WARN" {
		t.Fatalf("lines = %v", got)
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"debug", slog.LevelDebug, false},
		{"info", slog.LevelInfo, false},
		{"WARN", slog.LevelWarn, false},
		{" error ", slog.LevelError, false},
		{"warning", slog.LevelInfo, true},
		{"", slog.LevelInfo, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := logging.ParseLevel(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseLevel(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ParseLevel(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithFrom(t *testing.T) {
	t.Parallel()
	if logging.From(context.Background()) != slog.Default() {
		t.Fatal("From(empty ctx) is not slog.Default()")
	}
	var buf bytes.Buffer
	l := logging.New(&buf, slog.LevelInfo)
	if logging.From(logging.With(context.Background(), l)) != l {
		t.Fatal("From did not return the logger set by With")
	}
}
