package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

// fakeUpkeep records the times it was run at and answers with rep or err.
type fakeUpkeep struct {
	mu   sync.Mutex
	at   []time.Time
	rep  syncmod.UpkeepReport
	err  error
	runs chan struct{}
}

func (f *fakeUpkeep) Upkeep(_ context.Context, now time.Time) (syncmod.UpkeepReport, error) {
	f.mu.Lock()
	f.at = append(f.at, now)
	rep, err := f.rep, f.err
	f.mu.Unlock()
	if f.runs != nil {
		f.runs <- struct{}{}
	}
	return rep, err
}

// lockedBuffer is a log destination safe for the maintenance goroutine and the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMaintainRunsUpkeepAtTheClocksTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	boom := errors.New("lock timeout")
	tests := []struct {
		name    string
		err     error
		wantErr bool
	}{
		{name: "report"},
		{name: "failure", err: boom, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &fakeUpkeep{rep: syncmod.UpkeepReport{HorizonSeq: 42}, err: tc.err}
			m := app.NewMaintenance(up, clock.NewFake(now), nil)
			rep, err := m.Maintain(t.Context())
			if len(up.at) != 1 || !up.at[0].Equal(now) {
				t.Fatalf("upkeep ran at %v, want once at %v", up.at, now)
			}
			if tc.wantErr {
				if !errors.Is(err, boom) || !strings.Contains(err.Error(), "2025-03-04T05:06:07Z") {
					t.Fatalf("Maintain = %v, want the upkeep error with its time", err)
				}
				return
			}
			if err != nil || rep.HorizonSeq != 42 {
				t.Fatalf("Maintain = %+v, %v", rep, err)
			}
		})
	}
}

func TestMaintenanceRunRepeatsAndLogs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "reports", want: `"msg":"partition upkeep done"`},
		{name: "failures do not stop it", err: errors.New("database is down"), want: `"msg":"partition upkeep failed; retrying at the next run"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &fakeUpkeep{err: tc.err, runs: make(chan struct{}, 100)}
			var logs lockedBuffer
			m := app.NewMaintenance(up, nil, slog.New(slog.NewJSONHandler(&logs, nil)))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- m.Run(ctx, time.Millisecond) }()
			for range 3 {
				select {
				case <-up.runs:
				case <-time.After(within):
					t.Fatal("maintenance did not repeat")
				}
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
			case <-time.After(within):
				t.Fatal("Run did not stop")
			}
			out := logs.String()
			if !strings.Contains(out, tc.want) || !strings.Contains(out, `"msg":"maintenance stopped"`) {
				t.Fatalf("logs lack %s:\n%s", tc.want, out)
			}
			for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
				if !json.Valid([]byte(line)) {
					t.Fatalf("log line is not JSON: %s", line)
				}
			}
		})
	}
}

func TestMaintenanceRunRejectsAZeroInterval(t *testing.T) {
	t.Parallel()
	m := app.NewMaintenance(&fakeUpkeep{}, nil, nil)
	if err := m.Run(t.Context(), 0); err == nil {
		t.Fatal("Run with a zero interval succeeded")
	}
}
