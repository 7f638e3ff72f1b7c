package domain

import (
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
)

// NewDevice validates in (field names of createToken: device_name, device_status) and returns
// the device of principalID it describes. An empty status means pending; revoked is refused,
// since a device is never created revoked.
func NewDevice(id, principalID uuid.UUID, in identity.DeviceInput, now time.Time) (identity.Device, error) {
	var v validator
	name := v.displayName("device_name", in.Name)
	status := in.Status
	switch status {
	case "":
		status = identity.DevicePending
	case identity.DevicePending, identity.DeviceApproved:
	default:
		v.fail("device_status", msgDeviceStatus)
	}
	if err := v.err(); err != nil {
		return identity.Device{}, err
	}
	return identity.Device{ID: id, PrincipalID: principalID, Name: name, Status: status, CreatedAt: now.UTC()}, nil
}

// ApproveDevice approves d. An approved device stays approved; a revoked one cannot be
// approved (identity.ErrDeviceRevoked), since revocation is final.
func ApproveDevice(d *identity.Device) error {
	if d.Status == identity.DeviceRevoked {
		return identity.ErrDeviceRevoked
	}
	d.Status = identity.DeviceApproved
	return nil
}

// RevokeDevice revokes d; a revoked device stays revoked.
func RevokeDevice(d *identity.Device) error {
	d.Status = identity.DeviceRevoked
	return nil
}
