package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/ids"
)

// tokens implements identity.Tokens on a Service (whose own Revoke would clash with the
// devices').
type tokens struct{ s *Service }

// Tokens returns the Service as identity.Tokens.
func (s *Service) Tokens() identity.Tokens { return tokens{s} }

// Issue implements identity.Tokens. The device input is validated before anything is read;
// the device and the token are written in one transaction (the caller's, when there is one).
// The secret exists only in the returned IssuedToken: the store gets its hash.
func (t tokens) Issue(ctx context.Context, principalID uuid.UUID, device *identity.DeviceInput) (identity.IssuedToken, error) {
	s := t.s
	now := s.clock.Now()
	var dev identity.Device
	if device != nil {
		var err error
		if dev, err = domain.NewDevice(ids.New(), principalID, *device, now); err != nil {
			return identity.IssuedToken{}, err
		}
	}
	secret, err := domain.NewSecret(s.random)
	if err != nil {
		return identity.IssuedToken{}, err
	}
	var issued identity.IssuedToken
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		p, err := s.store.Principal(ctx, principalID)
		if err != nil {
			return err
		}
		if !p.DeactivatedAt.IsZero() {
			return identity.ErrPrincipalDeactivated
		}
		if device != nil {
			if err := s.store.InsertDevice(ctx, dev); err != nil {
				return err
			}
		}
		tok := domain.NewToken(ids.New(), p, dev.ID, domain.HashToken(secret.Reveal()), now, s.ttl)
		if err := s.store.InsertToken(ctx, tok); err != nil {
			return err
		}
		issued = identity.IssuedToken{
			Token:       secret,
			TokenID:     tok.ID,
			PrincipalID: p.ID,
			DeviceID:    dev.ID,
			Scopes:      tok.Scopes,
			ExpiresAt:   tok.ExpiresAt,
		}
		return nil
	})
	if err != nil {
		return identity.IssuedToken{}, fmt.Errorf("identity: issue token: %w", err)
	}
	return issued, nil
}

// Revoke implements identity.Tokens.
func (t tokens) Revoke(ctx context.Context, tokenID uuid.UUID) error {
	s := t.s
	if err := s.store.RevokeToken(ctx, tokenID, s.clock.Now()); err != nil {
		return fmt.Errorf("identity: revoke token: %w", err)
	}
	return nil
}
