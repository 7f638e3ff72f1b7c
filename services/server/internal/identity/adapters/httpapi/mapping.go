package httpapi

import (
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/problem"
)

// noStore is the Cache-Control of every response that carries a token.
const noStore = "no-store"

// toAPIPrincipal converts a principal into the API's Principal: email only for people, scopes
// only for apps, so the JSON never has null or a meaningless empty member.
func toAPIPrincipal(p identity.Principal) apigen.Principal {
	out := apigen.Principal{
		Id:          p.ID,
		Kind:        apigen.PrincipalKind(p.Kind),
		DisplayName: p.DisplayName,
		Handle:      p.Handle,
		CreatedAt:   p.CreatedAt,
	}
	if p.Email != "" {
		email := p.Email
		out.Email = &email
	}
	if p.Scopes != nil {
		scopes := make([]apigen.AppScope, len(p.Scopes))
		for i, s := range p.Scopes {
			scopes[i] = apigen.AppScope(s)
		}
		out.Scopes = &scopes
	}
	out.DeactivatedAt = optTime(p.DeactivatedAt)
	return out
}

// optTime is nil for the zero time (the member is left out), else a pointer to t.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// toAPIDevice converts a device into the API's Device.
func toAPIDevice(d identity.Device) apigen.Device {
	return apigen.Device{
		Id:          d.ID,
		PrincipalId: d.PrincipalID,
		Name:        d.Name,
		Status:      apigen.DeviceStatus(d.Status),
		CreatedAt:   d.CreatedAt,
	}
}

// toAPIToken converts an issued token into the createToken response; this is the one place
// the secret is revealed, to the caller that asked for it.
func toAPIToken(t identity.IssuedToken) apigen.CreateTokenResponse {
	out := apigen.CreateTokenResponse{Token: t.Token.Reveal(), TokenId: t.TokenID}
	if t.DeviceID != uuid.Nil {
		id := t.DeviceID
		out.DeviceId = &id
	}
	if !t.ExpiresAt.IsZero() {
		at := t.ExpiresAt
		out.ExpiresAt = &at
	}
	return out
}

// toPersonInput converts a createPerson body.
func toPersonInput(b apigen.CreatePersonRequest) identity.PersonInput {
	return identity.PersonInput{DisplayName: b.DisplayName, Handle: b.Handle, Email: b.Email}
}

// toAppInput converts a createApp body.
func toAppInput(b apigen.CreateAppRequest) identity.AppInput {
	scopes := make([]string, len(b.Scopes))
	for i, s := range b.Scopes {
		scopes[i] = string(s)
	}
	return identity.AppInput{DisplayName: b.DisplayName, Handle: b.Handle, Scopes: scopes}
}

// toDeviceInput converts the options of a createToken body: no body or no device_name means
// no device; a device_status without a device_name is a validation error, since there is no
// device for it to describe.
func toDeviceInput(b *apigen.CreateTokenRequest) (*identity.DeviceInput, error) {
	if b == nil || b.DeviceName == nil {
		if b != nil && b.DeviceStatus != nil {
			return nil, problem.Validation(problem.FieldError{Field: "device_status", Message: "needs device_name"})
		}
		return nil, nil
	}
	in := &identity.DeviceInput{Name: *b.DeviceName}
	if b.DeviceStatus != nil {
		in.Status = identity.DeviceStatus(*b.DeviceStatus)
	}
	return in, nil
}

// errNoBody is the validation error of an operation whose required body is missing.
var errNoBody = problem.Validation(problem.FieldError{Field: "body", Message: "is required"})

// toAPITokenInfo converts a stored token into the API's TokenInfo, leaving out what it does
// not have (no null).
func toAPITokenInfo(t identity.TokenInfo) apigen.TokenInfo {
	out := apigen.TokenInfo{Id: t.ID, PrincipalId: t.PrincipalID, CreatedAt: t.CreatedAt}
	if t.DeviceID != uuid.Nil {
		id, name, status := t.DeviceID, t.DeviceName, apigen.DeviceStatus(t.DeviceStatus)
		out.DeviceId, out.DeviceName, out.DeviceStatus = &id, &name, &status
	}
	if t.Scopes != nil {
		scopes := make([]apigen.AppScope, len(t.Scopes))
		for i, s := range t.Scopes {
			scopes[i] = apigen.AppScope(s)
		}
		out.Scopes = &scopes
	}
	out.ExpiresAt = optTime(t.ExpiresAt)
	out.RevokedAt = optTime(t.RevokedAt)
	out.LastUsedAt = optTime(t.LastUsedAt)
	return out
}

// toAPIDirectoryPrincipal converts a principal into what the directory shows of it: no email
// and no scopes, deactivated_at only when set.
func toAPIDirectoryPrincipal(p identity.Principal) apigen.DirectoryPrincipal {
	return apigen.DirectoryPrincipal{
		Id:            p.ID,
		Kind:          apigen.PrincipalKind(p.Kind),
		DisplayName:   p.DisplayName,
		Handle:        p.Handle,
		CreatedAt:     p.CreatedAt,
		DeactivatedAt: optTime(p.DeactivatedAt),
	}
}
