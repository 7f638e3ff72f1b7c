package wire

import (
	"context"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	chatapp "bothy.example.com/server/internal/chat/app"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// chatPlaces binds sync's Places port, where a thread or channel of personal
// data lies, to the chat module's lookups, which authorize nothing: the
// personal-data use cases authorize with the place they get.
type chatPlaces struct {
	threads  chat.Threads
	channels chat.Channels
}

var _ syncapp.Places = chatPlaces{}

// Thread returns where the thread lies and its newest message seq;
// problem.ErrNotFound from chat when there is no such thread.
func (p chatPlaces) Thread(ctx context.Context, id uuid.UUID) (syncapp.ThreadPlace, error) {
	t, err := p.threads.Get(ctx, id)
	if err != nil {
		return syncapp.ThreadPlace{}, err
	}
	return syncapp.ThreadPlace{ThreadID: t.ID, ChannelID: t.ChannelID, SpaceID: t.SpaceID, LastMessageSeq: t.LastMessageSeq}, nil
}

// Channel returns where the channel lies and whether it is archived;
// problem.ErrNotFound from chat when there is no such channel.
func (p chatPlaces) Channel(ctx context.Context, id uuid.UUID) (syncapp.ChannelPlace, error) {
	ch, err := p.channels.Get(ctx, id)
	if err != nil {
		return syncapp.ChannelPlace{}, err
	}
	return syncapp.ChannelPlace{ChannelID: ch.ID, SpaceID: ch.SpaceID, Archived: !ch.ArchivedAt.IsZero()}, nil
}

// ownReads binds chat's OwnReads port to the sync module's use case: the
// read state of an author's own post moves in the post's transaction.
type ownReads struct{ reads *syncapp.OwnReads }

var _ chatapp.OwnReads = ownReads{}

// MarkRead implements chatapp.OwnReads.
func (o ownReads) MarkRead(ctx context.Context, p chatapp.OwnPost) error {
	return o.reads.MarkRead(ctx, syncapp.OwnPost(p))
}
