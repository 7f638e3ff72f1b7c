package identity_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// secretText is a token-shaped secret, built at run time so that no token-shaped literal sits
// in the source.
var secretText = "bothy_" + strings.Repeat("c2VjcmV0", 5) + "abc"

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	s := identity.Secret(secretText)
	tok := identity.IssuedToken{Token: s, TokenID: uuid.New()}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("issued", "token", s, "issued", tok)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("issued", "token", s, "issued", tok)
	js, err := json.Marshal(tok)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	text, err := s.MarshalText()
	if err != nil {
		t.Fatalf("marshal text: %v", err)
	}
	outputs := map[string]string{
		"%v": fmt.Sprintf("%v", s), "%s": fmt.Sprintf("%s", s), "%q": fmt.Sprintf("%q", s),
		"%x": fmt.Sprintf("%x", s), "%#v": fmt.Sprintf("%#v", s), "struct %+v": fmt.Sprintf("%+v", tok),
		"struct %#v": fmt.Sprintf("%#v", tok), "Sprint": fmt.Sprint(s), "error": fmt.Errorf("issue %v: %w", s, errors.New("x")).Error(),
		"String": s.String(), "GoString": s.GoString(), "json": string(js), "text": string(text), "slog": logged.String(),
	}
	for name, out := range outputs {
		if strings.Contains(out, "c2VjcmV0") || strings.Contains(out, "bothy_") {
			t.Errorf("%s prints the secret: %s", name, out)
		}
		if !strings.Contains(out, identity.Redacted) {
			t.Errorf("%s = %q, want %s in it", name, out, identity.Redacted)
		}
	}
	if s.Reveal() != secretText {
		t.Errorf("Reveal = %q, want the secret", s.Reveal())
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	want := []string{"events:subscribe", "messages:read", "messages:write", "agents:read"}
	got := identity.Scopes()
	if !slices.Equal(got, want) {
		t.Fatalf("Scopes = %v, want %v (spec 04)", got, want)
	}
	got[0] = "changed"
	if identity.Scopes()[0] != want[0] {
		t.Error("Scopes returns the package's own slice")
	}
	for _, s := range want {
		if !identity.ValidScope(s) {
			t.Errorf("ValidScope(%q) = false", s)
		}
	}
	for _, s := range []string{"", "admin", "messages:*", "Messages:read"} {
		if identity.ValidScope(s) {
			t.Errorf("ValidScope(%q) = true", s)
		}
	}
}

func TestDeviceStatusValid(t *testing.T) {
	t.Parallel()
	for _, s := range []identity.DeviceStatus{identity.DevicePending, identity.DeviceApproved, identity.DeviceRevoked} {
		if !s.Valid() {
			t.Errorf("%s.Valid() = false", s)
		}
	}
	for _, s := range []identity.DeviceStatus{"", "lost", "Approved"} {
		if s.Valid() {
			t.Errorf("%q.Valid() = true", s)
		}
	}
}

func TestPrincipalRef(t *testing.T) {
	t.Parallel()
	p := identity.Principal{ID: uuid.New(), Kind: actor.KindAgent, DisplayName: "Robin", Handle: "robin", Email: "x"}
	want := identity.PrincipalRef{ID: p.ID, Kind: actor.KindAgent, DisplayName: "Robin", Handle: "robin"}
	if got := p.Ref(); got != want {
		t.Errorf("Ref = %+v, want %+v", got, want)
	}
}

func TestErrorsHaveTheirProblemKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err        error
		kind       error
		wantDetail string
	}{
		{identity.ErrPrincipalNotFound, problem.ErrNotFound, "The resource does not exist."},
		{identity.ErrDeviceNotFound, problem.ErrNotFound, "The resource does not exist."},
		{identity.ErrTokenNotFound, problem.ErrNotFound, "The resource does not exist."},
		{identity.ErrHandleTaken, problem.ErrConflict, "Another principal has this handle."},
		{identity.ErrDeviceRevoked, problem.ErrConflict, "The device is revoked; a revoked device cannot be approved."},
		{identity.ErrPrincipalDeactivated, problem.ErrConflict, "The principal is deactivated."},
	}
	for _, tc := range tests {
		wrapped := fmt.Errorf("use case: %w", tc.err)
		if !errors.Is(wrapped, tc.kind) || !errors.Is(wrapped, tc.err) {
			t.Errorf("%v: not both itself and %v", tc.err, tc.kind)
		}
		if got := problem.From(t.Context(), wrapped).Detail; got != tc.wantDetail {
			t.Errorf("%v: detail = %q, want %q", tc.err, got, tc.wantDetail)
		}
	}
}
