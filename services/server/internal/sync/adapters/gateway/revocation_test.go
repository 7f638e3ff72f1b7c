package gateway

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/sync/domain"
)

// TestEndedIn checks the scan of a tail batch: token.revoked names its token, principal.deactivated
// its principal; other events, and a revoke whose payload names no token (redacted), end nothing.
func TestEndedIn(t *testing.T) {
	t.Parallel()
	sam, robin, phone, laptop := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	revoked := func(token uuid.UUID) domain.StoredEvent {
		return domain.StoredEvent{Type: eventTokenRevoked, ResourceID: sam, AudienceID: sam,
			Payload: json.RawMessage(`{"principal_id":"` + sam.String() + `","token_id":"` + token.String() + `","revoked_at":"2026-12-01T09:30:15Z"}`)}
	}
	deactivated := domain.StoredEvent{Type: eventPrincipalDeactivated, ResourceID: robin, Payload: json.RawMessage(`{}`)}
	message := domain.StoredEvent{Type: "message.created", ResourceID: sam, Payload: json.RawMessage(`{"token_id":"` + phone.String() + `"}`)}
	redacted := domain.StoredEvent{Type: eventTokenRevoked, ResourceID: sam, Payload: json.RawMessage(`{"principal_id":"` + sam.String() + `"}`)}
	tests := []struct {
		name   string
		events []domain.StoredEvent
		ok     bool
		cred   credential
		want   string
	}{
		{"nothing", nil, false, credential{tokenID: phone, principalID: sam}, ""},
		{"ordinary events", []domain.StoredEvent{message, message}, false, credential{tokenID: phone, principalID: sam}, ""},
		{"a payload without a token", []domain.StoredEvent{redacted}, false, credential{tokenID: phone, principalID: sam}, ""},
		{"the phone's token revoked", []domain.StoredEvent{message, revoked(phone)}, true, credential{tokenID: phone, principalID: sam}, reasonTokenRevoked},
		{"another token of the same principal", []domain.StoredEvent{revoked(phone)}, true, credential{tokenID: laptop, principalID: sam}, ""},
		{"the principal deactivated", []domain.StoredEvent{deactivated}, true, credential{tokenID: laptop, principalID: robin}, reasonPrincipalDeactivated},
		{"both: deactivation wins", []domain.StoredEvent{revoked(phone), deactivated}, true, credential{tokenID: phone, principalID: robin}, reasonPrincipalDeactivated},
		{"an actor without a token", []domain.StoredEvent{revoked(phone)}, true, credential{principalID: sam}, ""},
	}
	for _, tc := range tests {
		e, ok := endedIn(tc.events)
		if ok != tc.ok {
			t.Errorf("%s: ok = %v, want %v", tc.name, ok, tc.ok)
		}
		if got := e.reason(tc.cred); got != tc.want {
			t.Errorf("%s: reason = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCredentialEnding checks the ending of each reason: close 4008 with the reason, after an
// error frame whose code is the reason.
func TestCredentialEnding(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{reasonTokenRevoked, reasonTokenExpired, reasonPrincipalDeactivated} {
		e := credentialEnding(reason)
		var f struct {
			Op, Code, Detail string
		}
		if err := json.Unmarshal(e.frame, &f); err != nil || f.Op != string(OpError) || f.Code != reason || f.Detail == "" {
			t.Errorf("%s: frame %s (%v)", reason, e.frame, err)
		}
		if e.code != CloseCredentialEnded || e.reason != reason || e.drop {
			t.Errorf("%s: ending %+v", reason, e)
		}
	}
}
