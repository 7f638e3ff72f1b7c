// Package app holds the identity module's use cases: creating principals, issuing and revoking
// tokens, approving and revoking devices, naming principals for other modules, and
// authenticating a bearer token, with the last-use times of tokens kept in memory and written
// in batches. Service implements every port of the identity root package; the ports it needs
// are declared here, from its point of view, and the PostgreSQL adapter implements them.
package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
)

// Store keeps principals, devices and tokens. Every method runs in the transaction of ctx when
// there is one, so a use case (or another module's) writes atomically.
type Store interface {
	// InsertPrincipal stores a new principal; identity.ErrHandleTaken when another principal
	// has its handle.
	InsertPrincipal(ctx context.Context, p identity.Principal) error
	// Principal returns the principal with id; identity.ErrPrincipalNotFound when none.
	Principal(ctx context.Context, id uuid.UUID) (identity.Principal, error)
	// Refs returns the principals with the given ids, in one query, in no particular order;
	// ids without a principal are skipped.
	Refs(ctx context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error)
	// ActiveRefs is Refs without the deactivated principals.
	ActiveRefs(ctx context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error)
	// ActiveByHandles returns the principals that are not deactivated whose handle is one of
	// handles (stored forms: lower case, valid, distinct), in one query, in no particular
	// order; handles without such a principal are skipped.
	ActiveByHandles(ctx context.Context, handles []string) ([]identity.PrincipalRef, error)
	// InsertDevice stores a new device of an existing principal.
	InsertDevice(ctx context.Context, d identity.Device) error
	// Device returns the device with id; identity.ErrDeviceNotFound when none.
	Device(ctx context.Context, id uuid.UUID) (identity.Device, error)
	// UpdateDevice locks the device with id, lets change modify it and stores the result,
	// returning it; an error from change is returned as is and nothing is stored.
	// identity.ErrDeviceNotFound when none. It needs the transaction of ctx for the lock.
	UpdateDevice(ctx context.Context, id uuid.UUID, change func(*identity.Device) error) (identity.Device, error)
	// InsertToken stores a new token (its device, if any, stored before).
	InsertToken(ctx context.Context, t domain.Token) error
	// Credential returns the token whose hash is hash, with its principal and device;
	// identity.ErrTokenNotFound when none. The lookup is an index probe on the hash.
	Credential(ctx context.Context, hash domain.TokenHash) (domain.Credential, error)
	// CredentialsByID returns the tokens with the given ids, with their principal and
	// device, in one query, in no particular order; ids without a token are skipped.
	CredentialsByID(ctx context.Context, ids []uuid.UUID) ([]domain.Credential, error)
	// RevokeToken sets the token's revocation time to at unless it is revoked already;
	// revoked is false when it was. identity.ErrTokenNotFound when none.
	RevokeToken(ctx context.Context, id uuid.UUID, at time.Time) (revoked bool, err error)
	// TokenInfo returns the token with id; identity.ErrTokenNotFound when none.
	TokenInfo(ctx context.Context, id uuid.UUID) (identity.TokenInfo, error)
	// Tokens returns at most limit tokens of the principal with an id above after, ordered
	// by id.
	Tokens(ctx context.Context, principalID, after uuid.UUID, limit int) ([]identity.TokenInfo, error)
	// LockPrincipals returns the principals with the given ids, locked until the end of the
	// transaction of ctx, in id order (so two transactions lock them alike); ids without a
	// principal are skipped.
	LockPrincipals(ctx context.Context, ids []uuid.UUID) ([]identity.Principal, error)
	// SetDeactivatedAt sets the principal's deactivation time to at (the zero time:
	// reactivated) when it differs in being set or not; changed is false when the principal
	// was in that state already. identity.ErrPrincipalNotFound when none.
	SetDeactivatedAt(ctx context.Context, id uuid.UUID, at time.Time) (changed bool, err error)
	// TouchTokens records when tokens were last used, in one statement; a time never moves a
	// token's last use backwards, and ids of tokens that no longer exist are ignored.
	TouchTokens(ctx context.Context, uses []TokenUse) error
}

// TokenUse is the last use of a token seen by this process since the previous flush.
type TokenUse struct {
	// TokenID identifies the token.
	TokenID uuid.UUID
	// At is when it was last used.
	At time.Time
}

// TxRunner runs a function in one transaction carried by its context (tx.Runner), joining the
// caller's transaction when there is one.
type TxRunner interface {
	// RunInTx runs fn in a transaction and commits when fn returns nil.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Owners names the instance's owners (the authz module knows them; wire binds it to its
// grants), so that deactivation keeps one owner active.
type Owners interface {
	// InstanceOwners returns the ids of the principals holding the owner grant on the
	// instance, deactivated ones included.
	InstanceOwners(ctx context.Context) ([]uuid.UUID, error)
}

// Instance names the instance: the actor of the events an operator's command appends
// without an actor in ctx (bothy admin), since the log needs one.
type Instance interface {
	// InstanceID returns the instance's id.
	InstanceID(ctx context.Context) (uuid.UUID, error)
}
