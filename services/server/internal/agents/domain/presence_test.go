package domain_test

import (
	"testing"
	"time"

	"bothy.example.com/server/internal/agents/domain"
)

func TestPresenceAt(t *testing.T) {
	th := domain.PresenceThresholds{IdleAfter: time.Minute, OfflineAfter: 5 * time.Minute, MinInterval: 30 * time.Second}
	last := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		age  time.Duration
		want domain.State
	}{
		{0, domain.StateOnline},
		{time.Minute, domain.StateOnline},
		{time.Minute + time.Microsecond, domain.StateIdle},
		{5 * time.Minute, domain.StateIdle},
		{5*time.Minute + time.Microsecond, domain.StateOffline},
		{24 * time.Hour, domain.StateOffline},
	}
	for _, tt := range tests {
		if got := th.PresenceAt(last, last.Add(tt.age)); got != tt.want {
			t.Errorf("PresenceAt(age %v) = %s, want %s", tt.age, got, tt.want)
		}
	}
}

func TestAnnounce(t *testing.T) {
	th := domain.PresenceThresholds{IdleAfter: time.Minute, OfflineAfter: 5 * time.Minute, MinInterval: 30 * time.Second}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		row   domain.PresenceRow
		state domain.State
		due   bool
	}{
		{"first heartbeat", domain.PresenceRow{LastHeartbeatAt: now, AnnouncedState: domain.StateUnknown}, domain.StateOnline, true},
		{"no change", domain.PresenceRow{LastHeartbeatAt: now, AnnouncedState: domain.StateOnline, AnnouncedAt: now.Add(-time.Hour)}, domain.StateOnline, false},
		{"change inside the interval waits", domain.PresenceRow{LastHeartbeatAt: now, AnnouncedState: domain.StateOffline, AnnouncedAt: now.Add(-29 * time.Second)}, domain.StateOnline, false},
		{"change at the interval", domain.PresenceRow{LastHeartbeatAt: now, AnnouncedState: domain.StateOffline, AnnouncedAt: now.Add(-30 * time.Second)}, domain.StateOnline, true},
		{"silence makes idle", domain.PresenceRow{LastHeartbeatAt: now.Add(-2 * time.Minute), AnnouncedState: domain.StateOnline, AnnouncedAt: now.Add(-2 * time.Minute)}, domain.StateIdle, true},
		{"billing mode change", domain.PresenceRow{LastHeartbeatAt: now, ReportedBillingMode: "metered", AnnouncedState: domain.StateOnline, AnnouncedAt: now.Add(-time.Minute)}, domain.StateOnline, true},
		{"billing mode change inside the interval", domain.PresenceRow{LastHeartbeatAt: now, ReportedBillingMode: "metered", AnnouncedState: domain.StateOnline, AnnouncedAt: now.Add(-time.Second)}, domain.StateOnline, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, due := th.Announce(tt.row, now)
			if state != tt.state || due != tt.due {
				t.Fatalf("Announce = %s, %v; want %s, %v", state, due, tt.state, tt.due)
			}
		})
	}
}
