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
// rows of sync.read_states (the personal store's ReadStatesOfThreads, the page's threads of
// the rows the snapshot's ReadStates reads), the count syncdomain.UnreadCount. chat never
// reads sync's table nor repeats the rule, so the list and the snapshot cannot disagree.
type syncUnreads struct {
	store interface {
		ReadStatesOfThreads(ctx context.Context, principalID uuid.UUID, threadIDs []uuid.UUID) (map[uuid.UUID]syncmod.ReadState, error)
	}
}

var _ chatapp.Unreads = syncUnreads{}

// Unread implements chatapp.Unreads.
func (u syncUnreads) Unread(ctx context.Context, principalID uuid.UUID, counters []chat.ThreadCounter) ([]chatapp.ThreadUnread, error) {
	ids := make([]uuid.UUID, len(counters))
	for i, c := range counters {
		ids[i] = c.ThreadID
	}
	states, err := u.store.ReadStatesOfThreads(ctx, principalID, ids)
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
