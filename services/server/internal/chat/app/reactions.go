package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
)

// Add implements chat.Reactions: the message is loaded and reaction.write on it authorized (404
// for who cannot read it, 403 for a viewer), the reaction validated (domain.Reaction), a
// message of an archived channel refused; then, in one transaction under the message's row
// lock, a deleted message is refused, a reaction the actor made already changes nothing, a new
// distinct reaction beyond chat.max_reactions_per_message is refused
// (domain.ErrTooManyReactions), and otherwise the reaction is stored and reaction.added
// appended.
func (v reactions) Add(ctx context.Context, messageID uuid.UUID, reaction string) error {
	s := v.s
	m, who, err := s.loadForReaction(ctx, messageID, reaction)
	if err != nil {
		return fmt.Errorf("chat: add reaction: %w", err)
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		locked, err := s.store.LockMessage(ctx, m.ID)
		if err != nil {
			return err
		}
		if locked.Redacted() {
			return domain.ErrMessageDeleted
		}
		st, err := s.store.ReactionState(ctx, locked.ID, who, reaction)
		if err != nil || st.Made {
			return err
		}
		if !st.Exists && st.Distinct >= s.cfg.MaxReactionsPerMessage {
			return domain.ErrTooManyReactions
		}
		added, err := s.store.InsertReaction(ctx, Reaction{MessageID: locked.ID, PrincipalID: who, Reaction: reaction, CreatedAt: s.clock.Now().UTC()})
		if err != nil || !added {
			return err
		}
		return s.appender.Append(ctx, reactionEvent(EventReactionAdded, who, locked, reaction))
	})
	if err != nil {
		return fmt.Errorf("chat: add reaction: %w", err)
	}
	return nil
}

// Remove implements chat.Reactions: authorized, validated and refused in an archived channel
// like Add; then, in one transaction under the message's row lock, the actor's reaction is
// removed and reaction.removed appended, or nothing happens when the actor has not made it (a
// deleted message has no reactions left).
func (v reactions) Remove(ctx context.Context, messageID uuid.UUID, reaction string) error {
	s := v.s
	m, who, err := s.loadForReaction(ctx, messageID, reaction)
	if err != nil {
		return fmt.Errorf("chat: remove reaction: %w", err)
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		locked, err := s.store.LockMessage(ctx, m.ID)
		if err != nil {
			return err
		}
		removed, err := s.store.DeleteReaction(ctx, locked.ID, who, reaction)
		if err != nil || !removed {
			return err
		}
		return s.appender.Append(ctx, reactionEvent(EventReactionRemoved, who, locked, reaction))
	})
	if err != nil {
		return fmt.Errorf("chat: remove reaction: %w", err)
	}
	return nil
}

// loadForReaction loads the message, authorizes reaction.write on it for the actor in ctx,
// validates the reaction and refuses a message of an archived channel, in that order: who
// cannot read the message learns nothing about it, not even that the reaction is malformed.
func (s *Service) loadForReaction(ctx context.Context, id uuid.UUID, reaction string) (chat.Message, uuid.UUID, error) {
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	m, err := s.store.Message(ctx, id)
	if err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	if err := s.authz.Authorize(ctx, kernel.ActionReactionWrite, messageResource(m)); err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	if err := domain.Reaction(reaction); err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	ch, err := s.store.Channel(ctx, m.ChannelID)
	if err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	if !ch.ArchivedAt.IsZero() {
		return chat.Message{}, uuid.Nil, domain.ErrChannelArchived
	}
	return m, who.PrincipalID, nil
}
