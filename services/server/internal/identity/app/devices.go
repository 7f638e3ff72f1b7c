package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
)

// devices implements identity.Devices on a Service.
type devices struct{ s *Service }

// Devices returns the Service as identity.Devices.
func (s *Service) Devices() identity.Devices { return devices{s} }

// Get implements identity.Devices.
func (d devices) Get(ctx context.Context, id uuid.UUID) (identity.Device, error) {
	dev, err := d.s.store.Device(ctx, id)
	if err != nil {
		return identity.Device{}, fmt.Errorf("identity: get device: %w", err)
	}
	return dev, nil
}

// Approve implements identity.Devices.
func (d devices) Approve(ctx context.Context, id uuid.UUID) (identity.Device, error) {
	return d.update(ctx, "approve", id, domain.ApproveDevice)
}

// Revoke implements identity.Devices.
func (d devices) Revoke(ctx context.Context, id uuid.UUID) (identity.Device, error) {
	return d.update(ctx, "revoke", id, domain.RevokeDevice)
}

// update changes the device under its row lock, in a transaction of its own or the caller's.
func (d devices) update(ctx context.Context, what string, id uuid.UUID, change func(*identity.Device) error) (identity.Device, error) {
	var out identity.Device
	err := d.s.tx.RunInTx(ctx, func(ctx context.Context) error {
		var err error
		out, err = d.s.store.UpdateDevice(ctx, id, change)
		return err
	})
	if err != nil {
		return identity.Device{}, fmt.Errorf("identity: %s device: %w", what, err)
	}
	return out, nil
}
