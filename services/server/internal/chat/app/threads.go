package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/ids"
)

// Create implements chat.Threads: the channel is loaded, thread.create on it authorized, the
// title and first message validated, an archived channel refused (domain.ErrChannelArchived),
// the mentions resolved, then the thread, its first message (seq 1) with its mentions,
// thread.created and message.created, the invocations of the agents the first message
// mentions or writes to (Invocations), and the author's read state moved to the first message
// (OwnReads), in one transaction (chat.ErrDuplicateKey for a taken external key, which rolls
// the thread back too).
func (v threads) Create(ctx context.Context, in chat.ThreadInput) (chat.Thread, chat.Message, error) {
	s := v.s
	ch, err := s.store.Channel(ctx, in.ChannelID)
	if err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	res := channelResource(ch)
	if err := s.authz.Authorize(ctx, kernel.ActionThreadCreate, res); err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	// Validated before the mentions are resolved: a text over the limit is not parsed.
	if _, _, err := domain.NewThread(uuid.Nil, uuid.Nil, ch, who.PrincipalID, in, nil, s.cfg.MaxMessageBytes, s.clock.Now()); err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	if !ch.ArchivedAt.IsZero() {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", domain.ErrChannelArchived)
	}
	mentioned, err := s.resolveMentions(ctx, in.ContentMD, res)
	if err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	var (
		th chat.Thread
		m  chat.Message
	)
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		var err error
		th, m, err = domain.NewThread(ids.New(), ids.New(), ch, who.PrincipalID, in, mentioned, s.cfg.MaxMessageBytes, s.clock.Now())
		if err != nil {
			return err
		}
		if err := s.store.InsertThread(ctx, th); err != nil {
			return err
		}
		if err := s.store.InsertMessage(ctx, m); err != nil {
			return err
		}
		if err := s.appender.Append(ctx, threadCreated(who.PrincipalID, th), messageCreated(who.PrincipalID, m)); err != nil {
			return err
		}
		if err := s.invokeAgents(ctx, m, ch.ParticipantIDs); err != nil {
			return err
		}
		return s.markOwnRead(ctx, who, m)
	})
	if err != nil {
		return chat.Thread{}, chat.Message{}, fmt.Errorf("chat: create thread: %w", err)
	}
	return th, m, nil
}

// Get implements chat.Threads.
func (v threads) Get(ctx context.Context, id uuid.UUID) (chat.Thread, error) {
	th, err := v.s.store.Thread(ctx, id)
	if err != nil {
		return chat.Thread{}, fmt.Errorf("chat: get thread: %w", err)
	}
	return th, nil
}

// Counters implements chat.Threads with the store's one query; no channels, no query.
func (v threads) Counters(ctx context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error) {
	if len(channelIDs) == 0 {
		return []chat.ThreadCounter{}, nil
	}
	out, err := v.s.store.ThreadCounters(ctx, channelIDs)
	if err != nil {
		return nil, fmt.Errorf("chat: thread counters: %w", err)
	}
	return out, nil
}
