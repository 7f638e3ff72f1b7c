package wire

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	chatapp "bothy.example.com/server/internal/chat/app"
	syncmod "bothy.example.com/server/internal/sync"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// syncUnreads binds chat's Unreads port (listChannelThreads' counts) to the sync module's
// read states and its unread rule, the two the snapshot counts with: the read positions are
// sync.Personal.ReadStates, the count syncdomain.UnreadCount. chat never reads sync's table
// nor repeats the rule, so the list and the snapshot cannot disagree.
type syncUnreads struct {
	personal interface {
		ReadStates(ctx context.Context, principalID uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error)
	}
}

var _ chatapp.Unreads = syncUnreads{}

// Unread implements chatapp.Unreads.
func (u syncUnreads) Unread(ctx context.Context, principalID uuid.UUID, counters []chat.ThreadCounter) ([]chatapp.ThreadUnread, error) {
	states, err := u.personal.ReadStates(ctx, principalID)
	if err != nil {
		return nil, err
	}
	out := make([]chatapp.ThreadUnread, len(counters))
	for i, c := range counters {
		read := states[c.ThreadID].LastReadSeq
		out[i] = chatapp.ThreadUnread{LastReadSeq: read, UnreadCount: syncdomain.UnreadCount(c.LastMessageSeq, read, c.UnreadFloorSeq)}
	}
	return out, nil
}
