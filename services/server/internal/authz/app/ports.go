// Package app holds the use cases of the authz module: the Authorizer (the decision of spec 04
// with its per-process Scope cache and the denial audit), the grant use cases with their
// events, and the bootstrap of the first owner. It talks to PostgreSQL, the chat module and
// the identity module only through the ports declared here and in identity.
package app

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/instance"
)

// GrantStore keeps the grants (authz.grants). Every method runs on the caller's transaction
// when ctx carries one. The PostgreSQL adapter implements it.
type GrantStore interface {
	// Insert stores g (its CreatedAt is ignored) and returns it as stored, with the database's
	// creation time. problem.ErrConflict when the principal already holds a grant on the
	// resource.
	Insert(ctx context.Context, g authz.Grant) (authz.Grant, error)
	// Delete removes the grant and returns what it was; problem.ErrNotFound when there is none.
	Delete(ctx context.Context, id uuid.UUID) (authz.Grant, error)
	// Get returns the grant; problem.ErrNotFound when there is none.
	Get(ctx context.Context, id uuid.UUID) (authz.Grant, error)
	// OfPrincipal returns every grant of the principal, the input of its Scope.
	OfPrincipal(ctx context.Context, principalID uuid.UUID) ([]authz.Grant, error)
	// Page returns at most limit grants with an id above after (uuid.Nil: from the start) in
	// id order, of one principal or, for uuid.Nil, of everyone.
	Page(ctx context.Context, principalID, after uuid.UUID, limit int) ([]authz.Grant, error)
	// LockOwners serializes every change of the instance's owners: it takes a lock held until
	// the transaction of ctx ends (an error outside one), then counts the owner grants as
	// committed plus this transaction's own changes.
	LockOwners(ctx context.Context) (owners int, err error)
}

// ChannelDirectory tells authz which channels and spaces exist and which space each channel
// lies in, without authz reading chat's tables (spec 01). The chat module implements it
// (chat.Directory, on its PostgreSQL store), and the composition root binds it.
type ChannelDirectory interface {
	// SpacesOfChannels maps each of the channels to its space, in one query. Channels of no
	// space (direct messages) and unknown channels are absent.
	SpacesOfChannels(ctx context.Context, channelIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error)
	// ChannelExists reports whether the channel exists (archived ones included).
	ChannelExists(ctx context.Context, channelID uuid.UUID) (bool, error)
	// SpaceExists reports whether the space exists (archived ones included).
	SpaceExists(ctx context.Context, spaceID uuid.UUID) (bool, error)
	// DirectParticipant reports whether the channel is a direct message (false for a standard
	// or an unknown channel) and whether the principal takes part in it, on the caller's
	// transaction when ctx carries one. A direct message is private to its participants: no
	// grant on it is made for anyone else (Grants.Grant).
	DirectParticipant(ctx context.Context, channelID, principalID uuid.UUID) (direct, participant bool, err error)
}

// InstanceInfo reads the instance row, whose id instance grants are stored with. The instance
// module's PostgreSQL store implements it.
type InstanceInfo interface {
	// Info returns the instance; instance.ErrNoInstance before it was set up.
	Info(ctx context.Context) (instance.Info, error)
}

// TxRunner runs a use case's writes in one transaction that every adapter joins through the
// context (kernel/tx.Runner).
type TxRunner interface {
	// RunInTx runs fn in a transaction, joining the one of ctx when there is one.
	RunInTx(ctx context.Context, fn func(ctx context.Context) error) error
}
