package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

// channelCapabilities are the actions a ChannelView reports, sorted. message.create and
// readstate.write are asked on a thread of the channel (their rules are on threads), the
// others on the channel.
var channelCapabilities = []kernel.Action{
	kernel.ActionChannelArchive, kernel.ActionChannelUpdate, kernel.ActionDraftWrite, kernel.ActionGrantAdmin,
	kernel.ActionMessageCreate, kernel.ActionReadStateWrite, kernel.ActionThreadCreate,
}

// Create implements chat.Channels: the space is loaded, channel.create on it authorized, the
// input validated, an archived space refused (domain.ErrSpaceArchived), then the channel and
// channel.created in one transaction (domain.ErrChannelNameTaken for a taken name).
func (v channels) Create(ctx context.Context, in chat.ChannelInput) (chat.Channel, error) {
	s := v.s
	sp, err := s.store.Space(ctx, in.SpaceID)
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionChannelCreate, spaceResource(sp.ID)); err != nil {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", err)
	}
	ch, err := domain.NewChannel(ids.New(), in, s.clock.Now())
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", err)
	}
	if !sp.ArchivedAt.IsZero() {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", domain.ErrSpaceArchived)
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		if err := s.store.InsertChannel(ctx, ch); err != nil {
			return err
		}
		return s.appender.Append(ctx, channelCreated(who.PrincipalID, ch))
	})
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: create channel: %w", err)
	}
	return ch, nil
}

// CreateDirect implements chat.Channels: channel.create on the instance, the canonical
// participant set (domain.DirectParticipants), every participant an existing principal (one
// Refs query), then in one transaction either the existing direct message of the set
// (created false, nothing written) or the new channel, channel.created and a member grant for
// every participant through authz.Grants (which appends its own events).
func (v channels) CreateDirect(ctx context.Context, participantIDs []uuid.UUID) (chat.Channel, bool, error) {
	s := v.s
	if err := s.authz.Authorize(ctx, kernel.ActionChannelCreate, authorize.Instance()); err != nil {
		return chat.Channel{}, false, fmt.Errorf("chat: create direct message: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Channel{}, false, fmt.Errorf("chat: create direct message: %w", err)
	}
	set, err := domain.DirectParticipants(who.PrincipalID, participantIDs, s.cfg.MaxDMParticipants)
	if err != nil {
		return chat.Channel{}, false, fmt.Errorf("chat: create direct message: %w", err)
	}
	refs, err := s.principals.Refs(ctx, set)
	if err != nil {
		return chat.Channel{}, false, fmt.Errorf("chat: create direct message: %w", err)
	}
	for _, p := range set {
		if _, ok := refs[p]; !ok {
			return chat.Channel{}, false, problem.Validation(problem.FieldError{
				Field: "participant_ids", Message: "names an id without a principal: " + p.String(),
			})
		}
	}
	var (
		out     chat.Channel
		created bool
	)
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		out, created, err = s.store.InsertDirect(ctx, domain.NewDirect(ids.New(), set, s.clock.Now()), domain.DirectKey(set))
		if err != nil || !created {
			return err
		}
		if err := s.appender.Append(ctx, channelCreated(who.PrincipalID, out)); err != nil {
			return err
		}
		for _, p := range set {
			if _, err := s.grants.Grant(ctx, authz.GrantInput{
				PrincipalID: p, ResourceKind: kernel.ResourceChannel, ResourceID: out.ID, Role: authz.RoleMember,
			}); err != nil {
				return fmt.Errorf("grant participant %s: %w", p, err)
			}
		}
		return nil
	})
	if err != nil {
		return chat.Channel{}, false, fmt.Errorf("chat: create direct message: %w", err)
	}
	return out, created, nil
}

// ListInSpace implements chat.Channels: the space is loaded, space.read on it authorized,
// then its channels that are not archived, each kept when channel.read is allowed (filter
// mode), with the actor's level and capabilities.
func (v channels) ListInSpace(ctx context.Context, spaceID uuid.UUID) ([]chat.ChannelView, error) {
	s := v.s
	sp, err := s.store.Space(ctx, spaceID)
	if err != nil {
		return nil, fmt.Errorf("chat: list channels: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionSpaceRead, spaceResource(sp.ID)); err != nil {
		return nil, fmt.Errorf("chat: list channels: %w", err)
	}
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return nil, fmt.Errorf("chat: list channels: %w", err)
	}
	list, err := s.store.ChannelsInSpace(ctx, sp.ID)
	if err != nil {
		return nil, fmt.Errorf("chat: list channels: %w", err)
	}
	out, err := channelViews(ctx, dec, list)
	if err != nil {
		return nil, fmt.Errorf("chat: list channels: %w", err)
	}
	return out, nil
}

// ListVisible implements chat.Channels: one query for the channels the actor's Scope admits
// (every standard channel for an instance-wide actor, else those of its fully visible spaces
// and its granted channels, plus the direct messages it takes part in), each kept when
// channel.read is allowed (filter mode), with level and capabilities.
func (v channels) ListVisible(ctx context.Context) ([]chat.ChannelView, error) {
	s := v.s
	dec, err := s.authz.ForActor(ctx)
	if err != nil {
		return nil, fmt.Errorf("chat: list visible channels: %w", err)
	}
	scope := dec.Scope()
	list, err := s.store.Channels(ctx, ChannelFilter{
		All: scope.InstanceWide(), SpaceIDs: scope.FullyVisibleSpaceIDs(), ChannelIDs: scope.VisibleChannelIDs(),
		ParticipantID: scope.PrincipalID(),
	})
	if err != nil {
		return nil, fmt.Errorf("chat: list visible channels: %w", err)
	}
	out, err := channelViews(ctx, dec, list)
	if err != nil {
		return nil, fmt.Errorf("chat: list visible channels: %w", err)
	}
	return out, nil
}

// channelViews keeps the channels the decider lets the actor read and adds level and
// capabilities to each.
func channelViews(ctx context.Context, dec authz.Decider, list []chat.Channel) ([]chat.ChannelView, error) {
	filter := authorize.Filter(ctx)
	out := make([]chat.ChannelView, 0, len(list))
	for _, ch := range list {
		res := channelResource(ch)
		err := dec.Authorize(filter, kernel.ActionChannelRead, res)
		switch {
		case isDenial(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("authorize channel %s: %w", ch.ID, err)
		}
		inThread := authorize.Resource{Kind: kernel.ResourceThread, SpaceID: ch.SpaceID, ChannelID: ch.ID}
		caps, err := capabilities(filter, dec, channelCapabilities, func(a kernel.Action) authorize.Resource {
			if a == kernel.ActionMessageCreate || a == kernel.ActionReadStateWrite {
				return inThread
			}
			return res
		})
		if err != nil {
			return nil, err
		}
		out = append(out, chat.ChannelView{Channel: ch, Level: dec.Level(res), Capabilities: caps})
	}
	return out, nil
}

// Archive implements chat.Channels like Spaces.Archive, with channel.archive on the channel
// and channel.archived.
func (v channels) Archive(ctx context.Context, id uuid.UUID) (chat.Channel, error) {
	s := v.s
	ch, err := s.store.Channel(ctx, id)
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: archive channel: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionChannelArchive, channelResource(ch)); err != nil {
		return chat.Channel{}, fmt.Errorf("chat: archive channel: %w", err)
	}
	who, err := actorOf(ctx)
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: archive channel: %w", err)
	}
	if !ch.ArchivedAt.IsZero() {
		return ch, nil
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		changed := false
		ch, err = s.store.UpdateChannel(ctx, id, func(c *chat.Channel) (bool, error) {
			changed = domain.Archive(&c.ArchivedAt, &c.Version, s.clock.Now())
			return changed, nil
		})
		if err != nil || !changed {
			return err
		}
		return s.appender.Append(ctx, channelArchived(who.PrincipalID, ch))
	})
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: archive channel: %w", err)
	}
	return ch, nil
}

// Get implements chat.Channels.
func (v channels) Get(ctx context.Context, id uuid.UUID) (chat.Channel, error) {
	ch, err := v.s.store.Channel(ctx, id)
	if err != nil {
		return chat.Channel{}, fmt.Errorf("chat: get channel: %w", err)
	}
	return ch, nil
}
