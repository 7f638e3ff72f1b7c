package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// TokenPrefix starts every token, so a leaked token is recognisable (secret scanners, log
// reviews) and a string that lacks it is refused without a database query.
const TokenPrefix = "bothy_"

// SecretBytes is how many random bytes a token carries: 256 bits (spec 04: at least 256).
const SecretBytes = 32

// TokenLen is the length of every token: the prefix and the unpadded base64url of the bytes.
var TokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(SecretBytes)

// ErrUnauthenticated is the one error of every token that does not authenticate: malformed,
// unknown, expired, revoked, of a revoked device or of a deactivated principal. It is the
// same value in every case, so nothing downstream can answer the cases differently.
var ErrUnauthenticated = fmt.Errorf("identity: token does not authenticate: %w", problem.ErrUnauthenticated)

// TokenHash is the SHA-256 of a token, the only form of it the server stores and looks up.
type TokenHash [sha256.Size]byte

// HashToken returns the hash of token. The lookup by hash is an index probe, so no secret is
// ever compared in Go and response times do not depend on how much of a guess was right.
func HashToken(token string) TokenHash {
	return sha256.Sum256([]byte(token))
}

// NewSecret reads SecretBytes from random (crypto/rand.Reader in production) and returns the
// token TokenPrefix + base64url(bytes) without padding.
func NewSecret(random io.Reader) (identity.Secret, error) {
	b := make([]byte, SecretBytes)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("identity: read random bytes for a token: %w", err)
	}
	return identity.Secret(TokenPrefix + base64.RawURLEncoding.EncodeToString(b)), nil
}

// WellFormed reports whether token could be a token: the prefix, then exactly the number of
// base64url characters a secret has. Anything else cannot match a stored hash, so it is
// refused before the database is asked.
func WellFormed(token string) bool {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok || len(token) != TokenLen {
		return false
	}
	for i := range len(rest) {
		c := rest[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Token is a stored token: everything but the secret.
type Token struct {
	// ID identifies the token.
	ID uuid.UUID
	// PrincipalID is the principal it acts as.
	PrincipalID uuid.UUID
	// DeviceID is the device it is bound to; uuid.Nil when none.
	DeviceID uuid.UUID
	// Hash is HashToken of the secret.
	Hash TokenHash
	// Scopes are the app's scopes at issue time; nil for people and agents.
	Scopes []string
	// CreatedAt is when it was issued.
	CreatedAt time.Time
	// ExpiresAt is when it stops authenticating; zero when never.
	ExpiresAt time.Time
}

// NewToken returns the token of p with the given id, hash and device, issued at now and valid
// for ttl (0: forever). An app's token carries the app's scopes as they are now: changing an
// app's scopes later does not change the tokens already issued.
func NewToken(id uuid.UUID, p identity.Principal, deviceID uuid.UUID, hash TokenHash, now time.Time, ttl time.Duration) Token {
	t := Token{ID: id, PrincipalID: p.ID, DeviceID: deviceID, Hash: hash, CreatedAt: now.UTC()}
	if p.Kind == actor.KindApp {
		t.Scopes = slices.Clone(p.Scopes)
		if t.Scopes == nil {
			t.Scopes = []string{}
		}
	}
	if ttl > 0 {
		t.ExpiresAt = t.CreatedAt.Add(ttl)
	}
	return t
}

// Credential is what the store knows about a token found by its hash: the token, its
// principal and its device, as of the lookup.
type Credential struct {
	// TokenID identifies the token.
	TokenID uuid.UUID
	// PrincipalID is the principal it acts as.
	PrincipalID uuid.UUID
	// Kind is the principal's kind.
	Kind actor.Kind
	// Scopes are the token's scopes (apps).
	Scopes []string
	// ExpiresAt is the token's expiry; zero when never.
	ExpiresAt time.Time
	// RevokedAt is when the token was revoked; zero while it is not.
	RevokedAt time.Time
	// DeactivatedAt is when the principal was deactivated; zero while it is active.
	DeactivatedAt time.Time
	// DeviceID is the token's device; uuid.Nil when none.
	DeviceID uuid.UUID
	// DeviceStatus is the device's status; empty when there is no device.
	DeviceStatus identity.DeviceStatus
}

// Ended returns why c no longer authenticates at now; empty when it does. A deactivated
// principal comes first, then a revoked token, a revoked device, an expired token (expiry is
// exclusive: at ExpiresAt it no longer works). A device in no known status counts as revoked.
func (c Credential) Ended(now time.Time) identity.CredentialEnd {
	switch {
	case !c.DeactivatedAt.IsZero():
		return identity.CredentialDeactivated
	case !c.RevokedAt.IsZero():
		return identity.CredentialRevoked
	case c.DeviceID != uuid.Nil && c.DeviceStatus != identity.DevicePending && c.DeviceStatus != identity.DeviceApproved:
		return identity.CredentialDeviceRevoked
	case !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt):
		return identity.CredentialExpired
	}
	return ""
}

// Actor decides whether c authenticates at now and returns the actor it acts as. A revoked or
// expired token (expiry is exclusive: at ExpiresAt it no longer works), a deactivated
// principal and a revoked device give ErrUnauthenticated; a pending device gives an actor with
// DevicePending, whom the authorizer refuses every action.
func (c Credential) Actor(now time.Time) (actor.Actor, error) {
	if c.Ended(now) != "" {
		return actor.Actor{}, ErrUnauthenticated
	}
	a := actor.Actor{
		PrincipalID:   c.PrincipalID,
		Kind:          c.Kind,
		DeviceID:      c.DeviceID,
		DevicePending: c.DeviceID != uuid.Nil && c.DeviceStatus == identity.DevicePending,
		TokenID:       c.TokenID,
		ExpiresAt:     c.ExpiresAt,
	}
	if c.Kind == actor.KindApp {
		a.Scopes = slices.Clone(c.Scopes)
	}
	return a, nil
}
