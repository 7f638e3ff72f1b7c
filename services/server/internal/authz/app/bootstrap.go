package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
)

// ErrOwnerExists refuses a bootstrap on an instance that has an owner already
// (authz.ErrOwnerExists).
var ErrOwnerExists = authz.ErrOwnerExists

var _ authz.Owners = (*Bootstrapper)(nil)

// BootstrapDeps are the collaborators of Bootstrapper, all required.
type BootstrapDeps struct {
	// Runner runs the bootstrap in one transaction.
	Runner TxRunner
	// Store serializes owner changes and counts the owners.
	Store GrantStore
	// Grants makes the owner grant (with its events and the permission_version advance).
	Grants authz.Grants
	// Principals creates the person.
	Principals identity.Principals
	// Tokens issues the person's first token.
	Tokens identity.Tokens
}

// Bootstrapper creates the first owner of an instance (`bothy admin bootstrap`); it is the
// authz.Owners port.
type Bootstrapper struct {
	runner     TxRunner
	store      GrantStore
	grants     authz.Grants
	principals identity.Principals
	tokens     identity.Tokens
}

// NewBootstrapper returns a Bootstrapper over deps; it fails for a missing dependency.
func NewBootstrapper(deps BootstrapDeps) (*Bootstrapper, error) {
	var errs []error
	if deps.Runner == nil {
		errs = append(errs, errors.New("runner is nil"))
	}
	if deps.Store == nil {
		errs = append(errs, errors.New("store is nil"))
	}
	if deps.Grants == nil {
		errs = append(errs, errors.New("grants is nil"))
	}
	if deps.Principals == nil {
		errs = append(errs, errors.New("principals is nil"))
	}
	if deps.Tokens == nil {
		errs = append(errs, errors.New("tokens is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("authz: new bootstrapper: %w", err)
	}
	return &Bootstrapper{runner: deps.Runner, store: deps.Store, grants: deps.Grants, principals: deps.Principals, tokens: deps.Tokens}, nil
}

// Bootstrap creates, in one transaction, a person with the display name, handle and email, an
// owner grant on the instance for it and a token (without a device) for it, and returns the
// person's id and the token; the token exists only in this result. ErrOwnerExists (a
// problem.ErrConflict) when the instance has an owner, also one a concurrent bootstrap just
// created; the identity module's validation errors (naming display_name, handle, email) and
// its ErrHandleTaken for bad input. The grant's events name the new owner as their actor.
func (b *Bootstrapper) Bootstrap(ctx context.Context, name, handle, email string) (uuid.UUID, identity.Secret, error) {
	var (
		id    uuid.UUID
		token identity.Secret
	)
	err := b.runner.RunInTx(ctx, func(ctx context.Context) error {
		owners, err := b.store.LockOwners(ctx)
		if err != nil {
			return err
		}
		if owners > 0 {
			return ErrOwnerExists
		}
		p, err := b.principals.CreatePerson(ctx, identity.PersonInput{DisplayName: name, Handle: handle, Email: email})
		if err != nil {
			return err
		}
		ctx = actor.With(ctx, actor.Actor{PrincipalID: p.ID, Kind: p.Kind})
		if _, err := b.grants.Grant(ctx, authz.GrantInput{PrincipalID: p.ID, ResourceKind: kernel.ResourceInstance, Role: authz.RoleOwner}); err != nil {
			return err
		}
		issued, err := b.tokens.Issue(ctx, p.ID, nil)
		if err != nil {
			return err
		}
		id, token = p.ID, issued.Token
		return nil
	})
	if err != nil {
		return uuid.Nil, "", fmt.Errorf("authz: bootstrap: %w", err)
	}
	return id, token, nil
}
