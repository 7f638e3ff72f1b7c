package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
)

// The reads of one object (getSpace, getChannel, getThread, getMessage) and a channel's
// members. Each loads the row that gives the resource its ancestors, then authorizes the
// read action on it (audited), so an object the actor may not read is problem.ErrNotFound
// exactly like one that does not exist (spec 05a, "Who gets 404 and who gets 403").

// Read implements chat.Spaces: the space is loaded, archived or not, space.read on it
// authorized, then its level and capabilities added as listSpaces adds them.
func (v spaces) Read(ctx context.Context, id uuid.UUID) (chat.SpaceView, error) {
	s := v.s
	sp, err := s.store.Space(ctx, id)
	if err != nil {
		return chat.SpaceView{}, fmt.Errorf("chat: read space: %w", err)
	}
	res := spaceResource(sp.ID)
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceRead, res); err != nil {
		return chat.SpaceView{}, fmt.Errorf("chat: read space: %w", err)
	}
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return chat.SpaceView{}, fmt.Errorf("chat: read space: %w", err)
	}
	caps, err := capabilities(authorize.Filter(ctx), dec, spaceCapabilities, func(kernel.Action) authorize.Resource { return res })
	if err != nil {
		return chat.SpaceView{}, fmt.Errorf("chat: read space: %w", err)
	}
	return chat.SpaceView{Space: sp, Level: dec.Level(res), Capabilities: caps}, nil
}

// Read implements chat.Channels: the channel is loaded, archived or not, channel.read on it
// authorized, then its level and capabilities added as the listings add them.
func (v channels) Read(ctx context.Context, id uuid.UUID) (chat.ChannelView, error) {
	s := v.s
	ch, err := s.store.Channel(ctx, id)
	if err != nil {
		return chat.ChannelView{}, fmt.Errorf("chat: read channel: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionChannelRead, channelResource(ch)); err != nil {
		return chat.ChannelView{}, fmt.Errorf("chat: read channel: %w", err)
	}
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return chat.ChannelView{}, fmt.Errorf("chat: read channel: %w", err)
	}
	views, err := channelViews(ctx, dec, []chat.Channel{ch})
	if err != nil {
		return chat.ChannelView{}, fmt.Errorf("chat: read channel: %w", err)
	}
	if len(views) != 1 {
		// The decider's Scope may be newer than the decision above (a grant revoked in
		// between): the channel is then as invisible as it is to the next request.
		return chat.ChannelView{}, fmt.Errorf("chat: read channel: %w", problem.ErrNotFound)
	}
	return views[0], nil
}

// Members implements chat.Channels: the channel is loaded, channel.read on it authorized,
// then one page of its readers from authz (one query) named through identity's ActiveRefs
// (one query). The page is cut by the readers authz lists, so Next is set whenever that page
// is full. A grant of a deactivated principal (who reads nothing) is left out of the items,
// as one whose principal identity does not know, but still moves the cursor, so no page
// repeats: a page may hold fewer members than the limit and still have a next one.
func (v channels) Members(ctx context.Context, id, after uuid.UUID, limit int) (chat.MemberPage, error) {
	s := v.s
	ch, err := s.store.Channel(ctx, id)
	if err != nil {
		return chat.MemberPage{}, fmt.Errorf("chat: list channel members: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionChannelRead, channelResource(ch)); err != nil {
		return chat.MemberPage{}, fmt.Errorf("chat: list channel members: %w", err)
	}
	if limit <= 0 || limit > s.cfg.MembersPageSize {
		limit = s.cfg.MembersPageSize
	}
	readers, err := s.readers.ChannelReaders(ctx, ch.SpaceID, ch.ID, after, limit)
	if err != nil {
		return chat.MemberPage{}, fmt.Errorf("chat: list channel members: %w", err)
	}
	ids := make([]uuid.UUID, len(readers))
	for i, r := range readers {
		ids[i] = r.PrincipalID
	}
	refs, err := s.principals.ActiveRefs(ctx, ids)
	if err != nil {
		return chat.MemberPage{}, fmt.Errorf("chat: list channel members: %w", err)
	}
	page := chat.MemberPage{Items: make([]chat.Member, 0, len(readers))}
	for _, r := range readers {
		if ref, ok := refs[r.PrincipalID]; ok {
			page.Items = append(page.Items, chat.Member{Principal: ref, Level: r.Role})
		}
	}
	if len(readers) == limit {
		page.Next = readers[len(readers)-1].PrincipalID
	}
	return page, nil
}

// Read implements chat.Threads: the thread is loaded, thread.read on it authorized, then its
// channel, its space (none in a direct message) and its first and newest messages, so a
// client can render the thread's header from one answer.
func (v threads) Read(ctx context.Context, id uuid.UUID) (chat.ThreadView, error) {
	s := v.s
	th, err := s.store.Thread(ctx, id)
	if err != nil {
		return chat.ThreadView{}, fmt.Errorf("chat: read thread: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, threadResource(th)); err != nil {
		return chat.ThreadView{}, fmt.Errorf("chat: read thread: %w", err)
	}
	out := chat.ThreadView{Thread: th}
	if out.Channel, err = s.store.Channel(ctx, th.ChannelID); err != nil {
		return chat.ThreadView{}, fmt.Errorf("chat: read thread: channel: %w", err)
	}
	if th.SpaceID != uuid.Nil {
		if out.Space, err = s.store.Space(ctx, th.SpaceID); err != nil {
			return chat.ThreadView{}, fmt.Errorf("chat: read thread: space: %w", err)
		}
	}
	first, err := s.store.Messages(ctx, th.ID, 0, 1)
	if err != nil {
		return chat.ThreadView{}, fmt.Errorf("chat: read thread: first message: %w", err)
	}
	if len(first) != 1 {
		return chat.ThreadView{}, fmt.Errorf("chat: read thread %s: no first message", th.ID)
	}
	out.FirstMessage, out.LastMessageAt = first[0], first[0].CreatedAt
	if th.LastMessageSeq > 1 {
		last, err := s.store.Messages(ctx, th.ID, th.LastMessageSeq-1, 1)
		if err != nil {
			return chat.ThreadView{}, fmt.Errorf("chat: read thread: newest message: %w", err)
		}
		if len(last) == 1 {
			out.LastMessageAt = last[0].CreatedAt
		}
	}
	return out, nil
}

// Read implements chat.Messages: the message is loaded and thread.read on it authorized (a
// message is read with its thread), then its reactions are counted for the actor, as in a
// page of listMessages.
func (v messages) Read(ctx context.Context, id uuid.UUID) (chat.Message, error) {
	s := v.s
	m, err := s.store.Message(ctx, id)
	if err != nil {
		return chat.Message{}, fmt.Errorf("chat: read message: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, messageResource(m)); err != nil {
		return chat.Message{}, fmt.Errorf("chat: read message: %w", err)
	}
	one := []chat.Message{m}
	if err := s.withReactions(ctx, one); err != nil {
		return chat.Message{}, fmt.Errorf("chat: read message: %w", err)
	}
	return one[0], nil
}
