package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
)

// Authenticate implements identity.Authenticator: a malformed token is refused without a
// query; a well-formed one is looked up by its SHA-256 (an index probe, never a comparison of
// secrets in Go) and checked at the clock's time. Every refusal is domain.ErrUnauthenticated.
// A successful use is recorded in memory for the next flush: authenticating never writes.
// No error contains the token.
func (s *Service) Authenticate(ctx context.Context, token string) (actor.Actor, error) {
	if !domain.WellFormed(token) {
		return actor.Actor{}, domain.ErrUnauthenticated
	}
	cred, err := s.store.Credential(ctx, domain.HashToken(token))
	if errors.Is(err, identity.ErrTokenNotFound) {
		return actor.Actor{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return actor.Actor{}, fmt.Errorf("identity: authenticate: look up the token hash: %w", err)
	}
	now := s.clock.Now()
	a, err := cred.Actor(now)
	if err != nil {
		return actor.Actor{}, err
	}
	s.lastUsed.touch(cred.TokenID, now)
	return a, nil
}

// Ended implements identity.Credentials: the tokens are read in one query and each is
// judged by Authenticate's rule at the clock's time; an id without a token (deleted) is
// revoked.
func (s *Service) Ended(ctx context.Context, tokenIDs []uuid.UUID) (map[uuid.UUID]identity.CredentialEnd, error) {
	ended := map[uuid.UUID]identity.CredentialEnd{}
	if len(tokenIDs) == 0 {
		return ended, nil
	}
	creds, err := s.store.CredentialsByID(ctx, tokenIDs)
	if err != nil {
		return nil, fmt.Errorf("identity: recheck credentials: %w", err)
	}
	now := s.clock.Now()
	found := make(map[uuid.UUID]struct{}, len(creds))
	for _, c := range creds {
		found[c.TokenID] = struct{}{}
		if end := c.Ended(now); end != "" {
			ended[c.TokenID] = end
		}
	}
	for _, id := range tokenIDs {
		if _, ok := found[id]; !ok {
			ended[id] = identity.CredentialRevoked
		}
	}
	return ended, nil
}
