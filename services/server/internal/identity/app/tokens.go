package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
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

// Revoke implements identity.Tokens: the revocation and its token.revoked event in one
// transaction (the caller's, when there is one), the event only when the token was not
// revoked before.
func (t tokens) Revoke(ctx context.Context, tokenID uuid.UUID) (identity.TokenInfo, error) {
	s := t.s
	now := s.clock.Now()
	var info identity.TokenInfo
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		revoked, err := s.store.RevokeToken(ctx, tokenID, now)
		if err != nil {
			return err
		}
		if info, err = s.store.TokenInfo(ctx, tokenID); err != nil {
			return err
		}
		if !revoked {
			return nil
		}
		return s.appendEvent(ctx, kernel.Event{
			Type:         identity.EventTokenRevoked,
			ResourceKind: kernel.ResourcePrincipal,
			ResourceID:   info.PrincipalID,
			AudienceID:   info.PrincipalID,
			Payload:      identity.TokenRevokedPayload{PrincipalID: info.PrincipalID, TokenID: info.ID, RevokedAt: info.RevokedAt},
		})
	})
	if err != nil {
		return identity.TokenInfo{}, fmt.Errorf("identity: revoke token: %w", err)
	}
	return info, nil
}

// Get implements identity.Tokens.
func (t tokens) Get(ctx context.Context, tokenID uuid.UUID) (identity.TokenInfo, error) {
	info, err := t.s.store.TokenInfo(ctx, tokenID)
	if err != nil {
		return identity.TokenInfo{}, fmt.Errorf("identity: get token: %w", err)
	}
	return info, nil
}

// List implements identity.Tokens: one query for limit+1 tokens tells whether there is a
// next page. A limit below 1 lists one token.
func (t tokens) List(ctx context.Context, principalID, after uuid.UUID, limit int) (identity.TokenPage, error) {
	limit = max(limit, 1)
	items, err := t.s.store.Tokens(ctx, principalID, after, limit+1)
	if err != nil {
		return identity.TokenPage{}, fmt.Errorf("identity: list tokens: %w", err)
	}
	page := identity.TokenPage{Items: items}
	if len(items) > limit {
		page.Items = items[:limit]
		page.Next = items[limit-1].ID
	}
	if page.Items == nil {
		page.Items = []identity.TokenInfo{}
	}
	return page, nil
}

// appendEvent appends e with the actor in ctx, or the instance for an operator's command
// (bothy admin), which has none.
func (s *Service) appendEvent(ctx context.Context, e kernel.Event) error {
	if a, ok := actor.From(ctx); ok && a.PrincipalID != uuid.Nil {
		e.ActorID = a.PrincipalID
	} else {
		id, err := s.instance.InstanceID(ctx)
		if err != nil {
			return err
		}
		e.ActorID = id
	}
	return s.appender.Append(ctx, e)
}
