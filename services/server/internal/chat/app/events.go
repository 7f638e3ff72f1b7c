package app

import (
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
)

// The durable event types the chat use cases append (spec 02). The payloads follow the
// register of sync/domain exactly; the appender refuses anything else.
const (
	// EventSpaceCreated: a space was created.
	EventSpaceCreated = "space.created"
	// EventSpaceArchived: a space was archived.
	EventSpaceArchived = "space.archived"
	// EventChannelCreated: a standard channel or a direct message was created.
	EventChannelCreated = "channel.created"
	// EventChannelArchived: a channel was archived.
	EventChannelArchived = "channel.archived"
	// EventThreadCreated: a thread was started (with its first message, message.created).
	EventThreadCreated = "thread.created"
	// EventMessageCreated: a message was posted.
	EventMessageCreated = "message.created"
	// EventMessageEdited: a message's text was replaced.
	EventMessageEdited = "message.edited"
	// EventMessageDeleted: a message was redacted; it carries no text.
	EventMessageDeleted = "message.deleted"
	// EventReactionAdded: a principal reacted to a message.
	EventReactionAdded = "reaction.added"
	// EventReactionRemoved: a principal took a reaction back.
	EventReactionRemoved = "reaction.removed"
)

type spaceCreatedPayload struct {
	SpaceID     uuid.UUID `json:"space_id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Version     int64     `json:"version"`
}

type spaceArchivedPayload struct {
	SpaceID    uuid.UUID `json:"space_id"`
	ArchivedAt time.Time `json:"archived_at"`
	Version    int64     `json:"version"`
}

type channelCreatedPayload struct {
	ChannelID      uuid.UUID   `json:"channel_id"`
	SpaceID        uuid.UUID   `json:"space_id,omitzero"` // absent for a direct message
	Kind           string      `json:"kind"`
	Name           string      `json:"name,omitempty"`
	Topic          string      `json:"topic,omitempty"`
	ParticipantIDs []uuid.UUID `json:"participant_ids,omitempty"`
	Version        int64       `json:"version"`
}

type channelArchivedPayload struct {
	ChannelID  uuid.UUID `json:"channel_id"`
	SpaceID    uuid.UUID `json:"space_id,omitzero"`
	ArchivedAt time.Time `json:"archived_at"`
	Version    int64     `json:"version"`
}

type threadCreatedPayload struct {
	ThreadID  uuid.UUID `json:"thread_id"`
	ChannelID uuid.UUID `json:"channel_id"`
	Title     string    `json:"title,omitempty"`
	CreatedBy uuid.UUID `json:"created_by"`
	Version   int64     `json:"version"`
}

type messageCreatedPayload struct {
	MessageID  uuid.UUID   `json:"message_id"`
	ThreadID   uuid.UUID   `json:"thread_id"`
	ChannelID  uuid.UUID   `json:"channel_id"`
	AuthorID   uuid.UUID   `json:"author_id"`
	Seq        int64       `json:"seq"`
	ContentMD  string      `json:"content_md"`
	MentionIDs []uuid.UUID `json:"mention_ids,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	// InvocationID is omitted unless the message answers an invocation.
	InvocationID *uuid.UUID `json:"invocation_id,omitempty"`
}

type messageEditedPayload struct {
	MessageID  uuid.UUID   `json:"message_id"`
	ThreadID   uuid.UUID   `json:"thread_id"`
	ChannelID  uuid.UUID   `json:"channel_id"`
	AuthorID   uuid.UUID   `json:"author_id"`
	Seq        int64       `json:"seq"`
	ContentMD  string      `json:"content_md"`
	MentionIDs []uuid.UUID `json:"mention_ids,omitempty"`
	EditedAt   time.Time   `json:"edited_at"`
}

type messageDeletedPayload struct {
	MessageID  uuid.UUID `json:"message_id"`
	ThreadID   uuid.UUID `json:"thread_id"`
	ChannelID  uuid.UUID `json:"channel_id"`
	AuthorID   uuid.UUID `json:"author_id"`
	Seq        int64     `json:"seq"`
	RedactedAt time.Time `json:"redacted_at"`
}

type reactionPayload struct {
	MessageID   uuid.UUID `json:"message_id"`
	ThreadID    uuid.UUID `json:"thread_id"`
	ChannelID   uuid.UUID `json:"channel_id"`
	PrincipalID uuid.UUID `json:"principal_id"`
	Reaction    string    `json:"reaction"`
}

// Each event is placed by its row: the space of a space; the space (uuid.Nil for a direct
// message) and channel of a channel; the space, channel and thread of a thread or message.

func spaceCreated(by uuid.UUID, s chat.Space) kernel.Event {
	return kernel.Event{
		Type: EventSpaceCreated, ActorID: by, SpaceID: s.ID, ResourceKind: kernel.ResourceSpace, ResourceID: s.ID,
		Payload: spaceCreatedPayload{SpaceID: s.ID, Name: s.Name, Description: s.Description, Version: s.Version},
	}
}

func spaceArchived(by uuid.UUID, s chat.Space) kernel.Event {
	return kernel.Event{
		Type: EventSpaceArchived, ActorID: by, SpaceID: s.ID, ResourceKind: kernel.ResourceSpace, ResourceID: s.ID,
		Payload: spaceArchivedPayload{SpaceID: s.ID, ArchivedAt: s.ArchivedAt, Version: s.Version},
	}
}

func channelCreated(by uuid.UUID, c chat.Channel) kernel.Event {
	return kernel.Event{
		Type: EventChannelCreated, ActorID: by, SpaceID: c.SpaceID, ChannelID: c.ID,
		ResourceKind: kernel.ResourceChannel, ResourceID: c.ID,
		Payload: channelCreatedPayload{
			ChannelID: c.ID, SpaceID: c.SpaceID, Kind: string(c.Kind), Name: c.Name, Topic: c.Topic,
			ParticipantIDs: c.ParticipantIDs, Version: c.Version,
		},
	}
}

func channelArchived(by uuid.UUID, c chat.Channel) kernel.Event {
	return kernel.Event{
		Type: EventChannelArchived, ActorID: by, SpaceID: c.SpaceID, ChannelID: c.ID,
		ResourceKind: kernel.ResourceChannel, ResourceID: c.ID,
		Payload: channelArchivedPayload{ChannelID: c.ID, SpaceID: c.SpaceID, ArchivedAt: c.ArchivedAt, Version: c.Version},
	}
}

func threadCreated(by uuid.UUID, t chat.Thread) kernel.Event {
	return kernel.Event{
		Type: EventThreadCreated, ActorID: by, SpaceID: t.SpaceID, ChannelID: t.ChannelID, ThreadID: t.ID,
		ResourceKind: kernel.ResourceThread, ResourceID: t.ID,
		Payload: threadCreatedPayload{ThreadID: t.ID, ChannelID: t.ChannelID, Title: t.Title, CreatedBy: t.CreatedBy, Version: t.Version},
	}
}

func messageEvent(typ string, by uuid.UUID, m chat.Message, payload any) kernel.Event {
	return kernel.Event{
		Type: typ, ActorID: by, SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID,
		ResourceKind: kernel.ResourceMessage, ResourceID: m.ID, Payload: payload,
	}
}

func messageCreated(by uuid.UUID, m chat.Message) kernel.Event {
	return messageEvent(EventMessageCreated, by, m, messageCreatedPayload{
		MessageID: m.ID, ThreadID: m.ThreadID, ChannelID: m.ChannelID, AuthorID: m.AuthorID, Seq: m.Seq,
		ContentMD: m.ContentMD, MentionIDs: m.MentionIDs, CreatedAt: m.CreatedAt, InvocationID: optionalID(m.InvocationID),
	})
}

// optionalID is nil for uuid.Nil, so the member is omitted.
func optionalID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func messageEdited(by uuid.UUID, m chat.Message) kernel.Event {
	return messageEvent(EventMessageEdited, by, m, messageEditedPayload{
		MessageID: m.ID, ThreadID: m.ThreadID, ChannelID: m.ChannelID, AuthorID: m.AuthorID, Seq: m.Seq,
		ContentMD: m.ContentMD, MentionIDs: m.MentionIDs, EditedAt: m.EditedAt,
	})
}

func messageDeleted(by uuid.UUID, m chat.Message) kernel.Event {
	return messageEvent(EventMessageDeleted, by, m, messageDeletedPayload{
		MessageID: m.ID, ThreadID: m.ThreadID, ChannelID: m.ChannelID, AuthorID: m.AuthorID, Seq: m.Seq,
		RedactedAt: m.RedactedAt,
	})
}

// reactionEvent is reaction.added or reaction.removed: placed and addressed like the message's
// own events (its resource is the message), so exactly its readers receive it and deleting the
// message redacts it with them.
func reactionEvent(typ string, by uuid.UUID, m chat.Message, reaction string) kernel.Event {
	return messageEvent(typ, by, m, reactionPayload{
		MessageID: m.ID, ThreadID: m.ThreadID, ChannelID: m.ChannelID, PrincipalID: by, Reaction: reaction,
	})
}
