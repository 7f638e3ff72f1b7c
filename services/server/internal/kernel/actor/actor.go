// Package actor carries the authenticated caller of a request through a
// context, so modules can decide on permissions without knowing how the
// caller was authenticated.
package actor

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Kind tells what sort of principal acts, because some rules (agents may not
// approve devices, apps act only within their scopes) depend on it.
type Kind string

// The kinds of principal that can act.
const (
	// KindPerson is a human user.
	KindPerson Kind = "person"
	// KindAgent is an AI agent acting under its own identity.
	KindAgent Kind = "agent"
	// KindApp is an integration acting with a token limited by scopes.
	KindApp Kind = "app"
)

// Actor is the authenticated caller of one request, set by authentication
// and read by every use case that checks a permission.
type Actor struct {
	// PrincipalID identifies the person, agent or app.
	PrincipalID uuid.UUID
	// Kind is the sort of principal.
	Kind Kind
	// Scopes limit what the token may do; empty means the principal's full rights.
	Scopes []string
	// DeviceID is the device the token belongs to, uuid.Nil if none.
	DeviceID uuid.UUID
	// DevicePending is true while the device awaits approval.
	DevicePending bool
	// TokenID is the token the caller authenticated with; uuid.Nil for an actor not made
	// from a token (a test, the owner bootstrap). A session that outlives one request (the
	// gateway's WebSocket) ends when this token is revoked.
	TokenID uuid.UUID
	// ExpiresAt is when that token stops authenticating; zero when it never expires. A
	// session that outlives one request ends then.
	ExpiresAt time.Time
}

// HasScope reports whether the token carries scope; callers decide what an
// empty scope list means for them.
func (a Actor) HasScope(scope string) bool {
	return slices.Contains(a.Scopes, scope)
}

type ctxKey struct{}

// With returns a context carrying a. The scopes are copied so a later change
// of the caller's slice cannot alter the actor seen downstream.
func With(ctx context.Context, a Actor) context.Context {
	a.Scopes = slices.Clone(a.Scopes)
	return context.WithValue(ctx, ctxKey{}, a)
}

// From returns the actor carried by ctx; ok is false for an unauthenticated
// request, which callers must turn into problem.ErrUnauthenticated.
func From(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(ctxKey{}).(Actor)
	return a, ok
}
