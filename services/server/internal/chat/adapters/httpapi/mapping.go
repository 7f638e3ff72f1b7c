package httpapi

import (
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/problem"
)

// errNoBody is the validation error of an operation whose required body is missing.
var errNoBody = problem.Validation(problem.FieldError{Field: "body", Message: "is required"})

// toAPISpace converts a space; the description and the archive time are omitted when empty.
func toAPISpace(s chat.Space) apigen.Space {
	return apigen.Space{
		Id:          s.ID,
		Name:        s.Name,
		Description: optString(s.Description),
		Version:     s.Version,
		CreatedAt:   s.CreatedAt,
		ArchivedAt:  optTime(s.ArchivedAt),
	}
}

// toAPISpaceView converts a space as the actor sees it; the level is omitted when the actor
// sees the space only through one of its channels.
func toAPISpaceView(v chat.SpaceView) apigen.SpaceView {
	out := apigen.SpaceView{
		Id:           v.Space.ID,
		Name:         v.Space.Name,
		Description:  optString(v.Space.Description),
		Version:      v.Space.Version,
		CreatedAt:    v.Space.CreatedAt,
		ArchivedAt:   optTime(v.Space.ArchivedAt),
		Capabilities: toAPICapabilities(v.Capabilities),
	}
	if v.Level != "" {
		level := apigen.Level(v.Level)
		out.Level = &level
	}
	return out
}

// toAPISpaceViews converts a listing; none is [], never null.
func toAPISpaceViews(vs []chat.SpaceView) apigen.SpaceViewList {
	items := make([]apigen.SpaceView, len(vs))
	for i, v := range vs {
		items[i] = toAPISpaceView(v)
	}
	return apigen.SpaceViewList{Items: items}
}

// toAPIChannel converts a channel: a direct message has no space and no name, a standard
// channel no participants ([]).
func toAPIChannel(c chat.Channel) apigen.Channel {
	return apigen.Channel{
		Id:             c.ID,
		SpaceId:        optID(c.SpaceID),
		Kind:           apigen.ChannelKind(c.Kind),
		Name:           optString(c.Name),
		Topic:          optString(c.Topic),
		ParticipantIds: ids(c.ParticipantIDs),
		Version:        c.Version,
		CreatedAt:      c.CreatedAt,
		ArchivedAt:     optTime(c.ArchivedAt),
	}
}

// toAPIChannelView converts a channel as the actor sees it. A channel the actor sees always
// comes with its role there (level is required in the API).
func toAPIChannelView(v chat.ChannelView) apigen.ChannelView {
	c := toAPIChannel(v.Channel)
	return apigen.ChannelView{
		Id:             c.Id,
		SpaceId:        c.SpaceId,
		Kind:           c.Kind,
		Name:           c.Name,
		Topic:          c.Topic,
		ParticipantIds: c.ParticipantIds,
		Version:        c.Version,
		CreatedAt:      c.CreatedAt,
		ArchivedAt:     c.ArchivedAt,
		Level:          apigen.Level(v.Level),
		Capabilities:   toAPICapabilities(v.Capabilities),
	}
}

// toAPIChannelViews converts a listing; none is [], never null.
func toAPIChannelViews(vs []chat.ChannelView) apigen.ChannelViewList {
	items := make([]apigen.ChannelView, len(vs))
	for i, v := range vs {
		items[i] = toAPIChannelView(v)
	}
	return apigen.ChannelViewList{Items: items}
}

// toAPICapabilities spells the actions as the API's capabilities, in the module's order.
func toAPICapabilities(actions []kernel.Action) []apigen.Capability {
	out := make([]apigen.Capability, len(actions))
	for i, a := range actions {
		out[i] = apigen.Capability(a)
	}
	return out
}

// toAPIThread converts a thread with its first message.
func toAPIThread(t chat.Thread, first chat.Message) apigen.Thread {
	m := toAPIMessage(first)
	return apigen.Thread{
		Id:             t.ID,
		ChannelId:      t.ChannelID,
		SpaceId:        optID(t.SpaceID),
		Title:          optString(t.Title),
		CreatedBy:      t.CreatedBy,
		CreatedAt:      t.CreatedAt,
		Version:        t.Version,
		LastMessageSeq: t.LastMessageSeq,
		FirstMessage:   &m,
	}
}

// toAPIThreadView converts a thread as getThread shows it; a direct message has no space and
// no names.
func toAPIThreadView(v chat.ThreadView) apigen.ThreadView {
	out := apigen.ThreadView{
		Id:             v.Thread.ID,
		ChannelId:      v.Thread.ChannelID,
		ChannelKind:    apigen.ChannelKind(v.Channel.Kind),
		ChannelName:    optString(v.Channel.Name),
		SpaceId:        optID(v.Thread.SpaceID),
		Title:          optString(v.Thread.Title),
		CreatedBy:      v.Thread.CreatedBy,
		CreatedAt:      v.Thread.CreatedAt,
		Version:        v.Thread.Version,
		LastMessageSeq: v.Thread.LastMessageSeq,
		LastMessageAt:  v.LastMessageAt,
		ReplyCount:     v.ReplyCount(),
		FirstMessage:   toAPIMessage(v.FirstMessage),
	}
	if v.Thread.SpaceID != uuid.Nil {
		out.SpaceName = optString(v.Space.Name)
	}
	return out
}

// toAPIMemberPage converts one page of a channel's members; none is [], and next_cursor is
// present when the module says more may follow.
func toAPIMemberPage(p chat.MemberPage) apigen.ChannelMemberList {
	items := make([]apigen.ChannelMember, len(p.Items))
	for i, m := range p.Items {
		items[i] = apigen.ChannelMember{
			Principal: apigen.PrincipalRef{
				Id:          m.Principal.ID,
				Kind:        apigen.PrincipalKind(m.Principal.Kind),
				DisplayName: m.Principal.DisplayName,
				Handle:      m.Principal.Handle,
			},
			Level: apigen.Level(m.Level),
		}
	}
	return apigen.ChannelMemberList{Items: items, NextCursor: optID(p.Next)}
}

// toAPIMessage converts a message; a deleted one keeps its ids and times, with empty
// content, no mentions, no reactions and redacted true.
func toAPIMessage(m chat.Message) apigen.Message {
	return apigen.Message{
		Id:         m.ID,
		ThreadId:   m.ThreadID,
		ChannelId:  m.ChannelID,
		SpaceId:    optID(m.SpaceID),
		Seq:        m.Seq,
		AuthorId:   m.AuthorID,
		ContentMd:  m.ContentMD,
		MentionIds: ids(m.MentionIDs),
		Redacted:   m.Redacted(),
		CreatedAt:  m.CreatedAt,
		EditedAt:   optTime(m.EditedAt),
		RedactedAt: optTime(m.RedactedAt),
		Reactions:  toAPIReactions(m.Reactions),

		InvocationId: optID(m.InvocationID),
	}
}

// toAPIReactions converts a message's reactions; [] for none.
func toAPIReactions(rs []chat.ReactionCount) []apigen.ReactionCount {
	out := make([]apigen.ReactionCount, len(rs))
	for i, r := range rs {
		out[i] = apigen.ReactionCount{Reaction: r.Reaction, Count: int64(r.Count), Me: r.Me}
	}
	return out
}

// toAPIMessagePage converts one page of at most limit messages: a full page may have more
// after it, so it carries the seq of its last message as next_cursor; a shorter page is the
// last and carries none.
func toAPIMessagePage(ms []chat.Message, limit int) apigen.MessageList {
	items := make([]apigen.Message, len(ms))
	for i, m := range ms {
		items[i] = toAPIMessage(m)
	}
	out := apigen.MessageList{Items: items}
	if len(ms) > 0 && len(ms) >= limit {
		next := ms[len(ms)-1].Seq
		out.NextCursor = &next
	}
	return out
}

// optString is nil for the empty string, so the member is omitted.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTime is nil for the zero time, so the member is omitted.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// optID is nil for uuid.Nil, so the member is omitted.
func optID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// ids is the list itself, or [] for nil.
func ids(list []uuid.UUID) []uuid.UUID {
	if list == nil {
		return []uuid.UUID{}
	}
	return list
}

// deref is the string s points to, or empty for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
