package wire

import (
	"context"

	"github.com/google/uuid"

	syncmod "bothy.example.com/server/internal/sync"
)

// The readers below let wire_test look at what the demo world left behind through the
// modules' ports (no operation reads read states or drafts back before the snapshot's).

// ReadStatesOf returns the principal's read states (sync.Personal.ReadStates).
func (a *App) ReadStatesOf(ctx context.Context, principalID uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error) {
	return a.personal.ReadStates(ctx, principalID)
}

// DraftsOf returns the principal's drafts (sync.Personal.Drafts).
func (a *App) DraftsOf(ctx context.Context, principalID uuid.UUID) ([]syncmod.Draft, error) {
	return a.personal.Drafts(ctx, principalID)
}

// UnreadMentionsOf counts the principal's unread mentions per thread of the channels
// (chat.Mentions.CountUnread).
func (a *App) UnreadMentionsOf(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	return a.chat.Mentions().CountUnread(ctx, principalID, channelIDs, readSeqs)
}
