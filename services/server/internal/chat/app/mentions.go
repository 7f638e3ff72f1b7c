package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/authorize"
)

// resolveMentions returns the principals a text mentions who may read the channel (res),
// sorted: the @handle tokens (domain.Mentions) resolved in one query to active principals
// (identity.Directory.ByHandles), each kept when authz.Authorizer.MayRead allows it. A mention
// of someone who cannot read the channel is dropped, so a message never tells anyone about a
// channel they cannot see. It runs before the use case's transaction: no lookup holds a lock.
func (s *Service) resolveMentions(ctx context.Context, text string, res authorize.Resource) ([]uuid.UUID, error) {
	handles := domain.Mentions(text)
	if len(handles) == 0 {
		return nil, nil
	}
	refs, err := s.principals.ByHandles(ctx, handles)
	if err != nil {
		return nil, fmt.Errorf("resolve mentions: %w", err)
	}
	var out []uuid.UUID
	for _, ref := range refs {
		ok, err := s.authz.MayRead(ctx, ref.ID, res)
		if err != nil {
			return nil, fmt.Errorf("resolve mentions: may %s read: %w", ref.ID, err)
		}
		if ok {
			out = append(out, ref.ID)
		}
	}
	return domain.SortIDs(out), nil
}

// CountUnread implements chat.Mentions with the store's one query.
func (v mentions) CountUnread(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	if len(channelIDs) == 0 {
		return map[uuid.UUID]int{}, nil
	}
	counts, err := v.s.store.CountUnreadMentions(ctx, principalID, channelIDs, readSeqs)
	if err != nil {
		return nil, fmt.Errorf("chat: count unread mentions: %w", err)
	}
	return counts, nil
}
