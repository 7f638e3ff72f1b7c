// Package identity knows who is asking: the principals of an instance (people, agents and
// apps), their devices and their bearer tokens, and turns a token into the actor of a request.
//
// This root package holds what the module offers to the rest of the server: the ports below
// and the values they exchange. The use cases behind them live in app, the tables in
// adapters/postgres, the HTTP operations and the authentication middleware in
// adapters/httpapi; see README.md. Every write port joins the caller's transaction (tx.Runner),
// so another module can create a principal or a token together with its own rows (the owner
// bootstrap of authz, createAgent of agents).
package identity

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// The scopes of an app token (spec 04). Each covers a fixed set of actions; the authorizer
// owns that mapping, this module only checks that an app names known scopes.
const (
	// ScopeEventsSubscribe covers catch-up and the snapshot (events.catch_up,
	// sync.snapshot.read).
	ScopeEventsSubscribe = "events:subscribe"
	// ScopeMessagesRead covers reading spaces, channels and threads.
	ScopeMessagesRead = "messages:read"
	// ScopeMessagesWrite covers creating threads and posting, editing and deleting messages.
	ScopeMessagesWrite = "messages:write"
	// ScopeAgentsRead covers reading agents.
	ScopeAgentsRead = "agents:read"
)

// scopes lists every scope in the order of spec 04.
var scopes = []string{ScopeEventsSubscribe, ScopeMessagesRead, ScopeMessagesWrite, ScopeAgentsRead}

// Scopes returns every app scope in the order of spec 04, so that validation, the OpenAPI
// document's enum and the authorizer's mapping can be checked against one list. The slice is
// a copy.
func Scopes() []string {
	return slices.Clone(scopes)
}

// ValidScope reports whether s is one of Scopes.
func ValidScope(s string) bool {
	return slices.Contains(scopes, s)
}

// Errors of the ports. Each wraps a problem kind, so the HTTP edge maps it without knowing
// this module; not-found errors carry no detail of their own, so their body is exactly that of
// a resource the actor may not read (existence is never leaked).
var (
	// ErrPrincipalNotFound means no principal has the id.
	ErrPrincipalNotFound = fmt.Errorf("identity: principal: %w", problem.ErrNotFound)
	// ErrDeviceNotFound means no device has the id.
	ErrDeviceNotFound = fmt.Errorf("identity: device: %w", problem.ErrNotFound)
	// ErrTokenNotFound means no token has the id.
	ErrTokenNotFound = fmt.Errorf("identity: token: %w", problem.ErrNotFound)
	// ErrHandleTaken means another principal has the handle, compared case-insensitively.
	ErrHandleTaken = problem.New(problem.ErrConflict, "Another principal has this handle.")
	// ErrDeviceRevoked means the device is revoked, which is final: it cannot be approved.
	ErrDeviceRevoked = problem.New(problem.ErrConflict, "The device is revoked; a revoked device cannot be approved.")
	// ErrPrincipalDeactivated means the principal is deactivated and gets no new tokens.
	ErrPrincipalDeactivated = problem.New(problem.ErrConflict, "The principal is deactivated.")
	// ErrLastOwner refuses to deactivate the instance's last active owner: nobody could
	// administer the instance any more.
	ErrLastOwner = problem.New(problem.ErrConflict, "This is the instance's last active owner; make another person owner first.")
)

// The durable event types identity appends (spec 02). Their receivers are the gateway too:
// it closes the WebSocket sessions of a revoked token or a deactivated principal.
const (
	// EventTokenRevoked is appended once, when a token is revoked; personal, to the token's
	// principal.
	EventTokenRevoked = "token.revoked"
	// EventPrincipalDeactivated is appended once, when a principal is deactivated; every
	// principal receives it (principal.read).
	EventPrincipalDeactivated = "principal.deactivated"
	// EventPrincipalReactivated is appended once, when a deactivated principal is
	// reactivated; every principal receives it.
	EventPrincipalReactivated = "principal.reactivated"
)

// TokenRevokedPayload is the payload of token.revoked.
type TokenRevokedPayload struct {
	// PrincipalID is the token's principal.
	PrincipalID uuid.UUID `json:"principal_id"`
	// TokenID is the revoked token.
	TokenID uuid.UUID `json:"token_id"`
	// RevokedAt is when it was revoked.
	RevokedAt time.Time `json:"revoked_at"`
}

// PrincipalDeactivatedPayload is the payload of principal.deactivated.
type PrincipalDeactivatedPayload struct {
	// PrincipalID is the deactivated principal.
	PrincipalID uuid.UUID `json:"principal_id"`
	// DeactivatedAt is when it was deactivated.
	DeactivatedAt time.Time `json:"deactivated_at"`
}

// PrincipalReactivatedPayload is the payload of principal.reactivated.
type PrincipalReactivatedPayload struct {
	// PrincipalID is the reactivated principal.
	PrincipalID uuid.UUID `json:"principal_id"`
}

// TokenInfo is what may be shown of a stored token: everything but the secret, which the
// server does not have.
type TokenInfo struct {
	// ID identifies the token.
	ID uuid.UUID
	// PrincipalID is the principal it acts as.
	PrincipalID uuid.UUID
	// DeviceID is its device; uuid.Nil when none.
	DeviceID uuid.UUID
	// DeviceName is its device's name; empty when none.
	DeviceName string
	// DeviceStatus is its device's status; empty when none.
	DeviceStatus DeviceStatus
	// Scopes are an app token's scopes; nil for people and agents.
	Scopes []string
	// CreatedAt is when it was issued.
	CreatedAt time.Time
	// ExpiresAt is when it stops authenticating; zero when never.
	ExpiresAt time.Time
	// RevokedAt is when it was revoked; zero while it is not.
	RevokedAt time.Time
	// LastUsedAt is its last use as last written (identity.last_used_flush_interval); zero
	// when never.
	LastUsedAt time.Time
}

// TokenPage is one page of a principal's tokens, ordered by id (issue order).
type TokenPage struct {
	// Items are the tokens of the page.
	Items []TokenInfo
	// Next is the id to pass as after for the next page; uuid.Nil on the last page.
	Next uuid.UUID
}

// Principal is a person, an agent or an app.
type Principal struct {
	// ID identifies the principal (UUIDv7).
	ID uuid.UUID
	// Kind is person, agent or app.
	Kind actor.Kind
	// DisplayName is the name shown for the principal.
	DisplayName string
	// Handle is the unique name (as in @alex), lower case.
	Handle string
	// Email is the address of a person; empty for agents and apps.
	Email string
	// Scopes are an app's scopes, sorted and without duplicates; nil for people and agents.
	// Every token issued to the app carries them.
	Scopes []string
	// CreatedAt is when the principal was created, in UTC.
	CreatedAt time.Time
	// DeactivatedAt is when the principal was deactivated; zero while it is active. The tokens
	// of a deactivated principal no longer authenticate.
	DeactivatedAt time.Time
}

// Ref returns how events and lists name p.
func (p Principal) Ref() PrincipalRef {
	return PrincipalRef{ID: p.ID, Kind: p.Kind, DisplayName: p.DisplayName, Handle: p.Handle}
}

// PrincipalRef is how events, lists and other modules name a principal (the PrincipalRef of
// the API): enough to show it, nothing private.
type PrincipalRef struct {
	// ID identifies the principal.
	ID uuid.UUID
	// Kind is person, agent or app.
	Kind actor.Kind
	// DisplayName is the name shown for the principal.
	DisplayName string
	// Handle is the unique handle, lower case.
	Handle string
}

// PersonInput is a new person.
type PersonInput struct {
	// DisplayName is required: 1 to 100 characters without control characters, outer space
	// trimmed.
	DisplayName string
	// Handle is required: 2 to 32 characters of letters, digits, _ . and -, starting and
	// ending with a letter or digit; stored in lower case.
	Handle string
	// Email is required: a plain address without a display name, at most 254 characters.
	Email string
}

// AppInput is a new app.
type AppInput struct {
	// DisplayName is required, as for a person.
	DisplayName string
	// Handle is required, as for a person.
	Handle string
	// Scopes are at least one of Scopes; duplicates count once.
	Scopes []string
}

// AgentInput is the principal of a new agent (the agents module keeps its profile).
type AgentInput struct {
	// DisplayName is required, as for a person.
	DisplayName string
	// Handle is required, as for a person.
	Handle string
}

// DeviceStatus is where a device stands.
type DeviceStatus string

// The statuses of a device (spec 04).
const (
	// DevicePending awaits approval: its tokens authenticate, but every action is refused
	// with device_pending.
	DevicePending DeviceStatus = "pending"
	// DeviceApproved may act with its principal's rights.
	DeviceApproved DeviceStatus = "approved"
	// DeviceRevoked is final: its tokens no longer authenticate.
	DeviceRevoked DeviceStatus = "revoked"
)

// Valid reports whether s is one of the statuses.
func (s DeviceStatus) Valid() bool {
	switch s {
	case DevicePending, DeviceApproved, DeviceRevoked:
		return true
	}
	return false
}

// Device is a device of a principal; tokens bound to it act only while it is approved.
type Device struct {
	// ID identifies the device (UUIDv7).
	ID uuid.UUID
	// PrincipalID is the principal the device belongs to.
	PrincipalID uuid.UUID
	// Name is what the device is called, such as "Sam's laptop".
	Name string
	// Status is pending, approved or revoked.
	Status DeviceStatus
	// CreatedAt is when the device was created, in UTC.
	CreatedAt time.Time
}

// DeviceInput binds a new token to a new device.
type DeviceInput struct {
	// Name is required: 1 to 100 characters without control characters.
	Name string
	// Status is pending or approved; empty means pending, so a device-bound token acts only
	// once someone approved the device unless its issuer says otherwise.
	Status DeviceStatus
}

// IssuedToken is a token just issued. Its Token is the only copy of the secret there will
// ever be: the server keeps its SHA-256 hash.
type IssuedToken struct {
	// Token is the bearer secret; it prints as [redacted] (see Secret).
	Token Secret
	// TokenID identifies the token, for revocation and audit.
	TokenID uuid.UUID
	// PrincipalID is the principal the token acts as.
	PrincipalID uuid.UUID
	// DeviceID is the device the token is bound to; uuid.Nil when none.
	DeviceID uuid.UUID
	// Scopes are the app scopes the token carries; nil for people and agents.
	Scopes []string
	// ExpiresAt is when the token stops authenticating; zero when it never expires.
	ExpiresAt time.Time
}

// Redacted is what a Secret prints as, wherever it is formatted, logged or encoded.
const Redacted = "[redacted]"

// Secret is a bearer token. It formats (fmt, every verb), logs (slog) and encodes (JSON, text)
// as Redacted, so a token put into a log line or an error by mistake does not leak; the one
// way to read it is Reveal, for the response that hands it out.
type Secret string

// Reveal returns the token itself. Call it only to hand the token to its owner (the
// createToken response, bothy admin's output).
func (s Secret) Reveal() string { return string(s) }

// String returns Redacted.
func (s Secret) String() string { return Redacted }

// GoString returns Redacted, for %#v.
func (s Secret) GoString() string { return Redacted }

// Format writes Redacted for every verb, so %x or %q cannot print the token either.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Redacted)) }

// MarshalJSON encodes Redacted.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText encodes Redacted.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// Directory names principals for other modules: envelopes, lists and mentions show a
// PrincipalRef instead of a bare id. Deactivated principals are still named by id, since old
// messages keep their author; ByHandles, which resolves new mentions, leaves them out.
type Directory interface {
	// Ref returns the principal with id; ErrPrincipalNotFound when there is none.
	Ref(ctx context.Context, id uuid.UUID) (PrincipalRef, error)
	// Refs returns the principals with the given ids in one query; an id without a principal
	// is absent from the map. Duplicates and uuid.Nil are allowed.
	Refs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]PrincipalRef, error)
	// ActiveRefs is Refs without the deactivated principals: listChannelMembers lists who
	// can read a channel, which a deactivated principal cannot.
	ActiveRefs(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]PrincipalRef, error)
	// ByHandles returns the active principals with the given handles in one query, keyed by
	// their stored (lower-case) handle: handles are matched case-insensitively. A handle
	// without a principal, of a deactivated principal, or that is no valid handle at all is
	// absent from the map; duplicates are allowed. The chat module resolves @handle mentions
	// with it.
	ByHandles(ctx context.Context, handles []string) (map[string]PrincipalRef, error)
}

// Authenticator turns a bearer token into the actor of a request.
type Authenticator interface {
	// Authenticate returns the actor the token acts as: with the app's scopes for an app
	// token, with DevicePending for a token of a pending device. A token that is malformed,
	// unknown, expired or revoked, that belongs to a revoked device or to a deactivated
	// principal gives an error wrapping problem.ErrUnauthenticated, the same in every case;
	// any other error is the database's. Neither ever contains the token.
	Authenticate(ctx context.Context, token string) (actor.Actor, error)
}

// CredentialEnd is why a token no longer authenticates, as Credentials tells it.
type CredentialEnd string

// The ends of a credential; one of them is why a token is refused.
const (
	// CredentialRevoked: the token was revoked or no longer exists.
	CredentialRevoked CredentialEnd = "token_revoked"
	// CredentialExpired: the token expired.
	CredentialExpired CredentialEnd = "token_expired"
	// CredentialDeactivated: the token's principal was deactivated.
	CredentialDeactivated CredentialEnd = "principal_deactivated"
	// CredentialDeviceRevoked: the token's device was revoked.
	CredentialDeviceRevoked CredentialEnd = "device_revoked"
)

// Credentials re-validates many tokens at once, by id: the gateway asks it every
// gateway.credential_recheck_interval for the tokens of its open sessions, so that a
// credential ended without an event (by hand in the database) ends its sessions too.
type Credentials interface {
	// Ended returns, of tokenIDs, the tokens that no longer authenticate at the clock's time,
	// with why, in one query; a token absent from the map still authenticates. The rule is
	// Authenticate's.
	Ended(ctx context.Context, tokenIDs []uuid.UUID) (map[uuid.UUID]CredentialEnd, error)
}

// Principals creates and reads principals. Creation validates the input (an error wrapping
// problem.ErrValidation naming the fields) and refuses a taken handle (ErrHandleTaken); it
// joins the caller's transaction when there is one. Creation appends no event; deactivation
// and reactivation append principal.deactivated and principal.reactivated (spec 02).
type Principals interface {
	// CreatePerson creates a person.
	CreatePerson(ctx context.Context, in PersonInput) (Principal, error)
	// CreateApp creates an app with its scopes.
	CreateApp(ctx context.Context, in AppInput) (Principal, error)
	// CreateAgentPrincipal creates the principal of an agent; the agents module creates the
	// agent's profile in the same transaction.
	CreateAgentPrincipal(ctx context.Context, in AgentInput) (Principal, error)
	// Get returns the principal with id; ErrPrincipalNotFound when there is none.
	Get(ctx context.Context, id uuid.UUID) (Principal, error)
	// Deactivate deactivates the principal and appends principal.deactivated, in one
	// transaction: its tokens stop authenticating at once and every session of it ends
	// (the gateway closes them). Deactivating a deactivated principal changes nothing and
	// appends nothing. ErrPrincipalNotFound; ErrLastOwner for the last active owner.
	Deactivate(ctx context.Context, id uuid.UUID) (Principal, error)
	// Reactivate reactivates the principal and appends principal.reactivated: its tokens
	// that are neither revoked nor expired authenticate again. Reactivating an active
	// principal changes nothing and appends nothing. ErrPrincipalNotFound.
	Reactivate(ctx context.Context, id uuid.UUID) (Principal, error)
}

// Tokens issues and revokes bearer tokens.
type Tokens interface {
	// Issue creates a token for the principal, valid for identity.token_ttl (0: forever),
	// carrying the scopes of an app; with device, bound to a new device of the principal.
	// It joins the caller's transaction. ErrPrincipalNotFound, ErrPrincipalDeactivated, or
	// a validation error naming device_name or device_status.
	Issue(ctx context.Context, principalID uuid.UUID, device *DeviceInput) (IssuedToken, error)
	// Revoke revokes the token at once and appends token.revoked in the same transaction:
	// its next request is refused and its gateway sessions end. Revoking a revoked token
	// changes nothing and appends nothing; the token is returned either way.
	// ErrTokenNotFound when there is none.
	Revoke(ctx context.Context, tokenID uuid.UUID) (TokenInfo, error)
	// Get returns the token with id (never its secret); ErrTokenNotFound when there is none.
	Get(ctx context.Context, tokenID uuid.UUID) (TokenInfo, error)
	// List returns a page of the principal's tokens after the token id after (uuid.Nil:
	// from the first), at most limit of them, revoked and expired ones included.
	List(ctx context.Context, principalID, after uuid.UUID, limit int) (TokenPage, error)
}

// Devices changes the status of devices.
type Devices interface {
	// Get returns the device with id; ErrDeviceNotFound when there is none.
	Get(ctx context.Context, id uuid.UUID) (Device, error)
	// Approve lets the device's tokens act. Approving an approved device changes nothing;
	// ErrDeviceRevoked for a revoked device, ErrDeviceNotFound when there is none.
	Approve(ctx context.Context, id uuid.UUID) (Device, error)
	// Revoke revokes the device for good: its tokens no longer authenticate. Revoking a
	// revoked device changes nothing. ErrDeviceNotFound when there is none.
	Revoke(ctx context.Context, id uuid.UUID) (Device, error)
}
