package domain_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	fixed := bytes.Repeat([]byte{0xfb}, domain.SecretBytes)
	s, err := domain.NewSecret(bytes.NewReader(fixed))
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	want := "bothy_" + base64.RawURLEncoding.EncodeToString(fixed)
	if s.Reveal() != want {
		t.Errorf("secret = %q, want %q", s.Reveal(), want)
	}
	if len(s.Reveal()) != domain.TokenLen || domain.TokenLen != 49 {
		t.Errorf("len = %d, TokenLen = %d, want 49", len(s.Reveal()), domain.TokenLen)
	}
	if !domain.WellFormed(s.Reveal()) {
		t.Errorf("WellFormed(%q) = false", s.Reveal())
	}

	if _, err := domain.NewSecret(bytes.NewReader(fixed[:10])); err == nil {
		t.Error("NewSecret with 10 random bytes: no error")
	}
	if _, err := domain.NewSecret(iotest.ErrReader(errors.New("no entropy"))); err == nil {
		t.Error("NewSecret with a failing reader: no error")
	}

	a, _ := domain.NewSecret(rand.Reader)
	b, _ := domain.NewSecret(rand.Reader)
	if a.Reveal() == b.Reveal() {
		t.Error("two secrets from crypto/rand are equal")
	}
}

func TestWellFormed(t *testing.T) {
	t.Parallel()
	good := "bothy_" + strings.Repeat("A", 43)
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"good", good, true},
		{"url alphabet", "bothy_" + strings.Repeat("-_", 21) + "a", true},
		{"empty", "", false},
		{"prefix only", "bothy_", false},
		{"wrong prefix", "bothx_" + strings.Repeat("A", 43), false},
		{"upper prefix", "BOTHY_" + strings.Repeat("A", 43), false},
		{"short", good[:48], false},
		{"long", good + "A", false},
		{"padding", "bothy_" + strings.Repeat("A", 42) + "=", false},
		{"std alphabet", "bothy_" + strings.Repeat("A", 42) + "+", false},
		{"space", "bothy_" + strings.Repeat("A", 42) + " ", false},
		{"non-ascii", "bothy_" + strings.Repeat("A", 41) + "\u00e9", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.WellFormed(tc.in); got != tc.want {
				t.Errorf("WellFormed(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	tok := "bothy_" + strings.Repeat("A", 43)
	if got, want := domain.HashToken(tok), domain.TokenHash(sha256.Sum256([]byte(tok))); got != want {
		t.Errorf("HashToken = %x, want %x", got, want)
	}
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	tid := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000f1")
	did := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	hash := domain.HashToken("x")
	app := identity.Principal{ID: pid, Kind: actor.KindApp, Scopes: []string{"agents:read"}}
	person := identity.Principal{ID: pid, Kind: actor.KindPerson}

	tok := domain.NewToken(tid, app, did, hash, now, 24*time.Hour)
	if tok.ID != tid || tok.PrincipalID != pid || tok.DeviceID != did || tok.Hash != hash ||
		!tok.CreatedAt.Equal(now) || !tok.ExpiresAt.Equal(now.Add(24*time.Hour)) || !slices.Equal(tok.Scopes, app.Scopes) {
		t.Errorf("app token = %+v", tok)
	}
	app.Scopes[0] = "changed"
	if tok.Scopes[0] != "agents:read" {
		t.Error("the token shares the app's scope slice")
	}
	tok = domain.NewToken(tid, person, uuid.Nil, hash, now, 0)
	if !tok.ExpiresAt.IsZero() || tok.Scopes != nil {
		t.Errorf("person token without ttl = %+v, want no expiry and nil scopes", tok)
	}
	if tok := domain.NewToken(tid, identity.Principal{Kind: actor.KindApp}, uuid.Nil, hash, now, 0); tok.Scopes == nil {
		t.Error("app token without scopes has nil scopes, want an empty list")
	}
}

func TestCredentialActor(t *testing.T) {
	t.Parallel()
	did := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	base := domain.Credential{TokenID: uuid.New(), PrincipalID: pid, Kind: actor.KindPerson}
	with := func(f func(*domain.Credential)) domain.Credential {
		c := base
		f(&c)
		return c
	}
	tests := []struct {
		name  string
		cred  domain.Credential
		want  actor.Actor
		unath bool
	}{
		{name: "person", cred: base, want: actor.Actor{PrincipalID: pid, Kind: actor.KindPerson}},
		{name: "not yet expired", cred: with(func(c *domain.Credential) { c.ExpiresAt = now.Add(time.Nanosecond) }), want: actor.Actor{PrincipalID: pid, Kind: actor.KindPerson}},
		{name: "expired at the instant", cred: with(func(c *domain.Credential) { c.ExpiresAt = now }), unath: true},
		{name: "expired", cred: with(func(c *domain.Credential) { c.ExpiresAt = now.Add(-time.Hour) }), unath: true},
		{name: "revoked", cred: with(func(c *domain.Credential) { c.RevokedAt = now.Add(-time.Hour) }), unath: true},
		{name: "deactivated", cred: with(func(c *domain.Credential) { c.DeactivatedAt = now.Add(-time.Hour) }), unath: true},
		{name: "approved device", cred: with(func(c *domain.Credential) { c.DeviceID, c.DeviceStatus = did, identity.DeviceApproved }), want: actor.Actor{PrincipalID: pid, Kind: actor.KindPerson, DeviceID: did}},
		{name: "pending device", cred: with(func(c *domain.Credential) { c.DeviceID, c.DeviceStatus = did, identity.DevicePending }), want: actor.Actor{PrincipalID: pid, Kind: actor.KindPerson, DeviceID: did, DevicePending: true}},
		{name: "revoked device", cred: with(func(c *domain.Credential) { c.DeviceID, c.DeviceStatus = did, identity.DeviceRevoked }), unath: true},
		{name: "device of unknown status", cred: with(func(c *domain.Credential) { c.DeviceID, c.DeviceStatus = did, "" }), unath: true},
		{name: "app with scopes", cred: with(func(c *domain.Credential) { c.Kind, c.Scopes = actor.KindApp, []string{"messages:read"} }), want: actor.Actor{PrincipalID: pid, Kind: actor.KindApp, Scopes: []string{"messages:read"}}},
		{name: "scopes of a person are ignored", cred: with(func(c *domain.Credential) { c.Scopes = []string{"messages:read"} }), want: actor.Actor{PrincipalID: pid, Kind: actor.KindPerson}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.cred.Actor(now)
			if tc.unath {
				if !errors.Is(err, domain.ErrUnauthenticated) || !errors.Is(err, problem.ErrUnauthenticated) {
					t.Fatalf("err = %v, want ErrUnauthenticated", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Actor: %v", err)
			}
			if got.PrincipalID != tc.want.PrincipalID || got.Kind != tc.want.Kind || got.DeviceID != tc.want.DeviceID ||
				got.DevicePending != tc.want.DevicePending || !slices.Equal(got.Scopes, tc.want.Scopes) {
				t.Errorf("Actor = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCredentialEnded: why a credential no longer authenticates (the gateway's recheck
// closes sessions with it); a deactivated principal comes first, then the token, its device,
// its expiry.
func TestCredentialEnded(t *testing.T) {
	t.Parallel()
	did := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	past := now.Add(-time.Hour)
	tests := []struct {
		name string
		cred domain.Credential
		want identity.CredentialEnd
	}{
		{"valid", domain.Credential{}, ""},
		{"pending device", domain.Credential{DeviceID: did, DeviceStatus: identity.DevicePending}, ""},
		{"revoked", domain.Credential{RevokedAt: past}, identity.CredentialRevoked},
		{"expired", domain.Credential{ExpiresAt: now}, identity.CredentialExpired},
		{"device revoked", domain.Credential{DeviceID: did, DeviceStatus: identity.DeviceRevoked}, identity.CredentialDeviceRevoked},
		{"deactivated", domain.Credential{DeactivatedAt: past}, identity.CredentialDeactivated},
		{"deactivated and revoked", domain.Credential{DeactivatedAt: past, RevokedAt: past, ExpiresAt: past}, identity.CredentialDeactivated},
		{"revoked and expired", domain.Credential{RevokedAt: past, ExpiresAt: past}, identity.CredentialRevoked},
	}
	for _, tc := range tests {
		if got := tc.cred.Ended(now); got != tc.want {
			t.Errorf("%s: Ended = %q, want %q", tc.name, got, tc.want)
		}
	}
}
