package domain_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
)

func TestNewDevice(t *testing.T) {
	t.Parallel()
	did := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	tests := []struct {
		name       string
		in         identity.DeviceInput
		wantStatus identity.DeviceStatus
		wantFields []string
	}{
		{name: "pending by default", in: identity.DeviceInput{Name: "Sam's laptop"}, wantStatus: identity.DevicePending},
		{name: "pending", in: identity.DeviceInput{Name: "Sam's laptop", Status: identity.DevicePending}, wantStatus: identity.DevicePending},
		{name: "approved", in: identity.DeviceInput{Name: "Sam's laptop", Status: identity.DeviceApproved}, wantStatus: identity.DeviceApproved},
		{name: "revoked is refused", in: identity.DeviceInput{Name: "Sam's laptop", Status: identity.DeviceRevoked}, wantFields: []string{"device_status"}},
		{name: "unknown status", in: identity.DeviceInput{Name: "Sam's laptop", Status: "lost"}, wantFields: []string{"device_status"}},
		{name: "no name", in: identity.DeviceInput{}, wantFields: []string{"device_name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewDevice(did, pid, tc.in, now)
			if f := fields(t, err); !slices.Equal(f, tc.wantFields) {
				t.Fatalf("invalid fields = %v, want %v", f, tc.wantFields)
			}
			if err != nil {
				return
			}
			want := identity.Device{ID: did, PrincipalID: pid, Name: "Sam's laptop", Status: tc.wantStatus, CreatedAt: now}
			if got != want {
				t.Errorf("NewDevice = %+v, want %+v", got, want)
			}
		})
	}
}

func TestDeviceTransitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		from    identity.DeviceStatus
		change  func(*identity.Device) error
		want    identity.DeviceStatus
		wantErr error
	}{
		{name: "approve pending", from: identity.DevicePending, change: domain.ApproveDevice, want: identity.DeviceApproved},
		{name: "approve approved", from: identity.DeviceApproved, change: domain.ApproveDevice, want: identity.DeviceApproved},
		{name: "approve revoked", from: identity.DeviceRevoked, change: domain.ApproveDevice, want: identity.DeviceRevoked, wantErr: identity.ErrDeviceRevoked},
		{name: "revoke pending", from: identity.DevicePending, change: domain.RevokeDevice, want: identity.DeviceRevoked},
		{name: "revoke approved", from: identity.DeviceApproved, change: domain.RevokeDevice, want: identity.DeviceRevoked},
		{name: "revoke revoked", from: identity.DeviceRevoked, change: domain.RevokeDevice, want: identity.DeviceRevoked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := identity.Device{Status: tc.from}
			if err := tc.change(&d); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if d.Status != tc.want {
				t.Errorf("status = %s, want %s", d.Status, tc.want)
			}
		})
	}
}
