package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

// Post implements chat.Messages: the thread is loaded, message.create on it authorized, the
// text validated and its mentions resolved; then, in one transaction, a reply with an
// invocation token answers its invocation first (Invocations), the message and its mentions
// are stored with the thread's next seq, taken under its row lock (Store.PostMessage; an
// archived channel is refused with domain.ErrChannelArchived and the advance rolled back),
// message.created is appended, the agents it invokes get their invocations, and the author's
// read state moved to the message (OwnReads). chat.ErrDuplicateKey for a taken external key.
func (v messages) Post(ctx context.Context, in chat.MessageInput) (chat.Message, error) {
	s := v.s
	th, err := s.store.Thread(ctx, in.ThreadID)
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionMessageCreate, threadResource(th)); err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	if err := domain.Content(in.ContentMD, s.cfg.MaxMessageBytes); err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	mentioned, err := s.resolveMentions(ctx, in.ContentMD, channelOf(th.SpaceID, th.ChannelID))
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	if in.InvocationToken != "" && s.invoke == nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w",
			problem.Validation(problem.FieldError{Field: "invocation_token", Message: "invocations are off"}))
	}
	var participants []uuid.UUID
	if th.SpaceID == uuid.Nil && s.invoke != nil {
		// A direct message invokes the agents taking part in it.
		ch, err := s.store.Channel(ctx, th.ChannelID)
		if err != nil {
			return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
		}
		participants = ch.ParticipantIDs
	}
	var m chat.Message
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		m = domain.NewMessage(ids.New(), th, who.PrincipalID, in, mentioned, s.clock.Now())
		if in.InvocationToken != "" {
			var err error
			if m.InvocationID, err = s.invoke.Answer(ctx, InvocationAnswer{Token: in.InvocationToken, MessageID: m.ID, ThreadID: m.ThreadID}); err != nil {
				return err
			}
		}
		p, err := s.store.PostMessage(ctx, m)
		if err != nil {
			return err
		}
		if p.ChannelArchived {
			return domain.ErrChannelArchived
		}
		// The seq and time the store gave it under the thread's lock.
		m.Seq, m.CreatedAt = p.Thread.LastMessageSeq, p.CreatedAt
		if err := s.appender.Append(ctx, messageCreated(who.PrincipalID, m)); err != nil {
			return err
		}
		if err := s.invokeAgents(ctx, m, participants); err != nil {
			return err
		}
		return s.markOwnRead(ctx, who, m)
	})
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: post message: %w", err)
	}
	return m, nil
}

// invokeAgents hands a message just stored, and the participants of its direct message (none
// in a standard channel), to the invocations port in the post's transaction; nothing without
// the port.
func (s *Service) invokeAgents(ctx context.Context, m chat.Message, participants []uuid.UUID) error {
	if s.invoke == nil {
		return nil
	}
	return s.invoke.Invoke(ctx, InvokingPost{ //nolint:wrapcheck // the caller names the use case
		MessageID: m.ID, ThreadID: m.ThreadID, ChannelID: m.ChannelID, SpaceID: m.SpaceID,
		MentionIDs: m.MentionIDs, ParticipantIDs: participants,
	})
}

// List implements chat.Messages: the thread is loaded and thread.read on it authorized;
// after must be 0 or more (a validation error naming after); limit 0 or less, or above
// chat.messages_page_size, is the page size. The page's reactions are counted for the actor
// in one more query.
func (v messages) List(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]chat.Message, error) {
	s := v.s
	th, err := s.store.Thread(ctx, threadID)
	if err != nil {
		return nil, fmt.Errorf("chat: list messages: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, threadResource(th)); err != nil {
		return nil, fmt.Errorf("chat: list messages: %w", err)
	}
	if after < 0 {
		return nil, problem.Validation(problem.FieldError{Field: "after", Message: "must be 0 or more"})
	}
	if limit <= 0 || limit > s.cfg.MessagesPageSize {
		limit = s.cfg.MessagesPageSize
	}
	out, err := s.store.Messages(ctx, th.ID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("chat: list messages: %w", err)
	}
	if err := s.withReactions(ctx, out); err != nil {
		return nil, fmt.Errorf("chat: list messages: %w", err)
	}
	return out, nil
}

// withReactions fills the Reactions of the messages, counted for the actor in ctx, in one
// query (Store.Reactions).
func (s *Service) withReactions(ctx context.Context, ms []chat.Message) error {
	if len(ms) == 0 {
		return nil
	}
	who, err := actorOf(ctx)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	counts, err := s.store.Reactions(ctx, ids, who.PrincipalID)
	if err != nil {
		return err
	}
	for i := range ms {
		ms[i].Reactions = counts[ms[i].ID]
	}
	return nil
}

// Edit implements chat.Messages: the message is loaded and message.update authorized (on the
// message, which members pass, and for anyone but its author on its channel too, which only
// admins pass); the text is validated, a deleted message refused (domain.ErrMessageDeleted), a
// message of an archived channel too (domain.ErrChannelArchived), the mentions resolved anew;
// then, under the row lock, the text, mentions and edit time are replaced and message.edited
// appended. The edited message is returned with its reactions, counted for the actor.
func (v messages) Edit(ctx context.Context, id uuid.UUID, contentMD string) (chat.Message, error) {
	s := v.s
	m, who, err := s.loadForChange(ctx, id, kernel.ActionMessageUpdate)
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	if err := domain.Content(contentMD, s.cfg.MaxMessageBytes); err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	if m.Redacted() {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", domain.ErrMessageDeleted)
	}
	ch, err := s.store.Channel(ctx, m.ChannelID)
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	if !ch.ArchivedAt.IsZero() {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", domain.ErrChannelArchived)
	}
	mentioned, err := s.resolveMentions(ctx, contentMD, channelOf(m.SpaceID, m.ChannelID))
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		var err error
		m, err = s.store.UpdateMessage(ctx, id, func(m *chat.Message) (bool, error) {
			return true, domain.Edit(m, contentMD, mentioned, s.clock.Now())
		})
		if err != nil {
			return err
		}
		return s.appender.Append(ctx, messageEdited(who, m))
	})
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	one := []chat.Message{m}
	if err := s.withReactions(ctx, one); err != nil {
		return chat.Message{}, fmt.Errorf("chat: edit message: %w", err)
	}
	return one[0], nil
}

// Delete implements chat.Messages: the message is loaded and message.delete authorized like
// Edit's message.update; a deleted message changes nothing. Otherwise, in one transaction,
// its text and mentions are cleared and its redaction time set under the row lock, every
// earlier event of it is redacted in the log (kernel.Redactor, first, so the new event stays
// whole), and message.deleted, which carries no text, is appended.
func (v messages) Delete(ctx context.Context, id uuid.UUID) error {
	s := v.s
	m, who, err := s.loadForChange(ctx, id, kernel.ActionMessageDelete)
	if err != nil {
		return fmt.Errorf("chat: delete message: %w", err)
	}
	if m.Redacted() {
		return nil
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		changed := false
		m, err := s.store.UpdateMessage(ctx, id, func(m *chat.Message) (bool, error) {
			changed = domain.Redact(m, s.clock.Now())
			return changed, nil
		})
		if err != nil || !changed {
			return err
		}
		if err := s.redactor.Redact(ctx, kernel.ResourceMessage, m.ID); err != nil {
			return err
		}
		return s.appender.Append(ctx, messageDeleted(who, m))
	})
	if err != nil {
		return fmt.Errorf("chat: delete message: %w", err)
	}
	return nil
}

// loadForChange loads a message and authorizes action (message.update or message.delete) for
// the actor in ctx: on the message (the policy asks a member), and for someone else's message
// also on its channel (the policy asks an admin: moderation). It returns the message and the
// actor's principal id; problem.ErrUnauthenticated without an actor, before any read.
func (s *Service) loadForChange(ctx context.Context, id uuid.UUID, action kernel.Action) (chat.Message, uuid.UUID, error) {
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	m, err := s.store.Message(ctx, id)
	if err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	// The action on the message first (members change their own messages): it answers 404 to
	// an actor who cannot read the message and 403 to a reader who may not post. Someone
	// else's message then needs the action on its channel too, which only admins have.
	if err := s.authz.Authorize(ctx, action, messageResource(m)); err != nil {
		return chat.Message{}, uuid.Nil, err
	}
	if who.PrincipalID != m.AuthorID {
		if err := s.authz.Authorize(ctx, action, channelOf(m.SpaceID, m.ChannelID)); err != nil {
			return chat.Message{}, uuid.Nil, err
		}
	}
	return m, who.PrincipalID, nil
}
