package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	syncmod "bothy.example.com/server/internal/sync"
)

// OwnPost is a message its author has just posted (a new message or a thread's first): the
// principal whose read state moves, where the thread lies and the message's seq.
type OwnPost struct {
	// AuthorID is the principal who posted; its read state moves.
	AuthorID uuid.UUID
	// SpaceID is the thread's space; uuid.Nil in a direct message.
	SpaceID uuid.UUID
	// ChannelID is the thread's channel.
	ChannelID uuid.UUID
	// ThreadID is the thread posted in.
	ThreadID uuid.UUID
	// Seq is the new message's seq.
	Seq int64
}

// OwnReads marks an author's own posts as read (spec 05a, "Own posts are read"): what one
// writes, one has read, so a client never shows its own message as unread. The chat module
// calls it in the transaction of every post through a port of its own, which the composition
// root binds here. It authorizes nothing: the post was authorized (message.create or
// thread.create), and the read state is its consequence, not an action of its own.
type OwnReads struct {
	store    PersonalStore
	appender kernel.Appender
	clock    clock.Clock
}

// NewOwnReads returns the use case over the personal store, the appender of the post's
// transaction and the clock; it fails for a missing dependency.
func NewOwnReads(store PersonalStore, appender kernel.Appender, clk clock.Clock) (*OwnReads, error) {
	var errs []error
	if store == nil {
		errs = append(errs, errors.New("store is nil"))
	}
	if appender == nil {
		errs = append(errs, errors.New("appender is nil"))
	}
	if clk == nil {
		errs = append(errs, errors.New("clock is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new own reads: %w", err)
	}
	return &OwnReads{store: store, appender: appender, clock: clk}, nil
}

// MarkRead moves the author's read state of the thread forward to the post's seq and appends
// the author's read_state.updated (the event updateReadState appends, with the author as its
// only audience), in the transaction of ctx, which must be the post's. A read state already
// at or past the seq is left as it is and nothing is appended: a read state never moves
// backwards for a post.
func (o *OwnReads) MarkRead(ctx context.Context, p OwnPost) error {
	stored, moved, err := o.store.AdvanceReadState(ctx, syncmod.ReadState{
		PrincipalID: p.AuthorID, ThreadID: p.ThreadID, ChannelID: p.ChannelID, LastReadSeq: p.Seq,
	}, o.clock.Now())
	if err != nil {
		return fmt.Errorf("sync: mark own post read: %w", err)
	}
	if !moved {
		return nil
	}
	err = o.appender.Append(ctx, kernel.Event{
		Type: EventReadStateUpdated, ActorID: p.AuthorID, AudienceID: p.AuthorID,
		SpaceID: p.SpaceID, ChannelID: stored.ChannelID, ThreadID: p.ThreadID,
		ResourceKind: kernel.ResourceThread, ResourceID: p.ThreadID,
		Payload: readStatePayload{
			ThreadID: p.ThreadID, ChannelID: stored.ChannelID, LastReadSeq: stored.LastReadSeq, Version: stored.Version,
		},
	})
	if err != nil {
		return fmt.Errorf("sync: mark own post read: %w", err)
	}
	return nil
}
