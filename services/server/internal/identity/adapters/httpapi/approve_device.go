package httpapi

import (
	"context"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel"
)

// ApproveDevice approves a device after principal.admin on a principal without id (the
// device's, decided with the actor's instance role) before the device is looked up, so that an
// actor without the right learns nothing about it: 200 with the device, 404 for an unknown
// device, 409 for a revoked one.
func (s *Server) ApproveDevice(ctx context.Context, req apigen.ApproveDeviceRequestObject) (apigen.ApproveDeviceResponseObject, error) {
	if err := s.authz.Authorize(ctx, kernel.ActionPrincipalAdmin, anyPrincipal); err != nil {
		return nil, err
	}
	d, err := s.devices.Approve(ctx, req.DeviceId)
	if err != nil {
		return nil, err
	}
	return apigen.ApproveDevice200JSONResponse(toAPIDevice(d)), nil
}
